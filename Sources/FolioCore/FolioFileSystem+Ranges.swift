import Foundation

/// The version of a placeholder a ranged download fetches.
public struct RangedTarget: Sendable, Hashable {
    /// The node.
    public var ino: UInt64
    /// Its item.
    public var itemID: ItemID
    /// Its container.
    public var container: ContainerID
    /// The provider version to fetch.
    public var version: String
    /// The version's size.
    public var size: Int64
}

extension FolioFileSystem {
    // MARK: Ranged materialization

    /// What a download of `ino` fetches now, or `nil` when its content is local.
    public func rangedTarget(_ ino: UInt64) throws(FolioError) -> RangedTarget? {
        try state.withLock { state throws(FolioError) in
            guard let node = state.node(ino) else { throw .notFound("inode \(ino)") }
            guard !node.state.hasLocalContent else { return nil }
            guard let version = node.remoteVersion else { throw .io("\(node.name) has no content anywhere") }
            // (From the container the provider holds it in: a move across containers may wait for upload.)
            return RangedTarget(
                ino: ino, itemID: node.itemID, container: node.remoteContainer ?? node.container, version: version,
                size: node.size)
        }
    }

    /// The content cache, where ranged downloads fill their version files and keep their sidecars.
    public var contentCache: ContentCache { cache }

    /// Records the state of the download of `version` of `ino`: `materializing` while it fetches, a placeholder
    /// again when it stops; `user.folio.progress` shows `present` bytes (`nil`: no download any more). Ignored
    /// once the node moved on (another version, or content of its own).
    public func recordRangedDownload(_ ino: UInt64, version: String, fetching: Bool, present: Int64?) {
        state.withLock { state in
            guard var node = state.node(ino), node.remoteVersion == version, !node.state.hasLocalContent else { return }
            if let present {
                state.progress[ino] = (present, node.size)
            } else {
                state.progress[ino] = nil
            }
            let previous = node.state
            do {
                try node.apply(fetching ? .materializeStarted : .materializeFailed)
            } catch {
                // (Only placeholders get here, which allow both.) The state stays as it is.
                logger.error("download of \(node.name) not recorded: \(error)")
                return
            }
            guard node.state != previous else { return }
            if state.nodes[ino] != nil { state.nodes[ino] = node } else { state.orphans[ino] = node }
        }
    }

    /// Records that the provider could not be reached (a fetch failed with `.offline`), for `folio status`.
    public func recordProviderOffline(_ error: FolioError) {
        state.withLock { state in
            state.providerOnline = false
            state.lastProviderError = error.description
        }
    }

    /// Makes the complete version file `fileName` the content of `ino`, now `materialized`, if the node still is a
    /// placeholder of `version`; returns whether it did (if not, the file is still the caller's).
    public func installRangedContent(_ ino: UInt64, version: String, fileName: String) -> Bool {
        let installed = state.withLock { state -> Bool in
            guard var node = state.node(ino), node.remoteVersion == version, !node.state.hasLocalContent else {
                return false
            }
            state.progress[ino] = nil
            var info = stat()
            if stat(cache.path(of: fileName).string, &info) == 0 { node.size = Int64(info.st_size) }
            node.contentFile = fileName
            do {
                try node.apply(.materializeFinished)
                try save(node, state: &state)
            } catch {
                logger.error("cannot record materialized \(node.name): \(error)")
                return false
            }
            return true
        }
        if installed {
            keeper?.contentChanged()
            // The content is local now: the blocks `stat` reports changed (see ``attributes(of:state:handle:)``).
            invalidator?.invalidateInode(ino)
        }
        return installed
    }

    /// How many failed reads `folio status` shows.
    static let readFailuresKept = 10

    /// Records that reads of `ino` failed with `reason` (the version they read is gone from the remote: the next
    /// open reads the new one), for `folio status`.
    public func recordReadFailure(_ ino: UInt64, reason: String) {
        state.withLock { state in
            let name = state.path(of: ino) ?? state.node(ino)?.name ?? "inode \(ino)"
            let line = "\(name): \(reason) (a new open reads the version the remote has now)"
            state.readFailures.removeAll { $0 == line }
            state.readFailures.append(line)
            if state.readFailures.count > Self.readFailuresKept { state.readFailures.removeFirst() }
        }
    }

    // MARK: Partial content

    /// Keeps the bytes `record` names (durable, the record written) as the `partial` content of `ino`, if the node
    /// still is a placeholder of that version; returns whether it did (if not, the files are still the caller's).
    public func keepPartialContent(_ ino: UInt64, record: PartialContentRecord) -> Bool {
        let (kept, stale) = state.withLock { state -> (Bool, [PartialContent]) in
            guard let node = state.node(ino), node.remoteVersion == record.version, node.size == record.size,
                  !node.state.hasLocalContent
            else { return (false, []) }
            let previous = state.partials[ino]
            state.partials[ino] = PartialContent(record)
            return (true, [previous].compactMap { $0 }.filter { $0.file != record.file })
        }
        removePartialFiles(stale)
        return kept
    }

    /// The record of the bytes of `version` of `ino` kept here, handed over to a download that starts from them
    /// (the core forgets them: the download owns the files now); `nil` when none are kept for that version.
    public func claimPartialContent(_ ino: UInt64, version: String) -> PartialContentRecord? {
        let claimed = state.withLock { state -> PartialContent? in
            guard let kept = state.partials[ino], kept.version == version else { return nil }
            state.partials[ino] = nil
            return kept
        }
        guard let claimed else { return nil }
        guard let record = cache.readPartialRecord(named: claimed.recordName), record.file == claimed.file else {
            removePartialFiles([claimed])
            return nil
        }
        return record
    }

    /// Forgets the kept bytes of nodes that are gone, have content of their own or another version now (the caller
    /// removes their files outside the lock: ``removePartialFiles(_:)``).
    func stalePartials(state: inout State) -> [PartialContent] {
        var stale: [PartialContent] = []
        for (ino, kept) in state.partials {
            if let node = state.node(ino), node.remoteVersion == kept.version, !node.state.hasLocalContent { continue }
            stale.append(kept)
            state.partials[ino] = nil
        }
        return stale
    }

    /// Removes the version files and sidecars of kept bytes nobody owns any more.
    func removePartialFiles(_ partials: [PartialContent]) {
        for kept in partials {
            cache.removePartialRecord(named: kept.recordName)
            cache.remove(kept.file)
        }
    }

    /// At start: the version files of interrupted ranged downloads whose sidecar still describes a placeholder's
    /// current version, with their sidecars (kept, to resume from, as the node's partial content); every other
    /// sidecar is left to garbage collection. A node left `materializing` by a crash is a placeholder again.
    func resumableDownloadFiles(state: inout State) -> Set<String> {
        for var node in state.nodes.values.filter({ $0.state == .materializing }) {
            do {
                try node.apply(.materializeFailed)
                state.nodes[node.ino] = node
            } catch {
                logger.error("\(node.name) stays \(node.state.name): \(error)")  // (materializing allows it)
            }
        }
        var kept: Set<String> = []
        let records = cache.allFiles().filter { $0.hasSuffix(PartialContentRecord.suffix) }.compactMap { name in
            cache.readPartialRecord(named: name).map { (name, $0) }
        }
        // (A placeholder not read yet is read with its folder: its kept bytes resume its download.)
        if (try? loadStoredItems(records.map(\.1.itemID), state: &state)) == nil {
            logger.warning("cannot read the placeholders of interrupted downloads from the store")
        }
        for (name, record) in records {
            guard let ino = state.byItemID[record.itemID], let node = state.nodes[ino],
                  node.container == record.container, node.remoteVersion == record.version,
                  node.size == record.size, !node.state.hasLocalContent
            else { continue }
            kept.insert(name)
            kept.insert(record.file)
            state.partials[ino] = PartialContent(record)
        }
        return kept
    }
}
