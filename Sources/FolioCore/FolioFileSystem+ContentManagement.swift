/// What an eviction did.
public struct EvictionReport: Sendable, Codable, Equatable {
    /// Files turned back into placeholders.
    public var evicted: Int = 0
    /// Bytes of local content freed.
    public var freedBytes: Int64 = 0
    /// Files left as they were, with the reason (`notes.txt: has changes not uploaded yet`).
    public var skipped: [String] = []

    /// An empty report.
    public init() {}
}

/// Brings remote changes in; the core asks for a refresh when it knows the remote differs from the tree (a
/// delete it did not make because the item changed there).
public protocol RemoteRefreshing: Sendable {
    /// Refreshes the tree from the remote soon.
    func refreshSoon()
}

/// Keeps pinned items downloaded and the content cache within its limit; woken by the core when pins change
/// or content arrives.
public protocol ContentKeeping: Sendable {
    /// Called after a change that may need downloads or evictions.
    func contentChanged()
}

extension FolioFileSystem {
    /// Pins (keeps downloaded) or unpins an item; a folder recursively, and items created in a pinned folder
    /// later are pinned too. Returns how many items changed. Pinned placeholders are downloaded by the content
    /// keeper.
    @discardableResult
    public func setPinned(_ ino: UInt64, _ pinned: Bool) throws(FolioError) -> Int {
        try refuseVirtual(ino)
        let changed = try state.withLock { state throws(FolioError) -> Int in
            guard state.nodes[ino] != nil else { throw .notFound("inode \(ino)") }
            var changed = 0
            for next in try subtree(of: ino, state: &state) {
                guard var node = state.nodes[next], node.pinned != pinned else { continue }
                node.pinned = pinned
                state.nodes[next] = node
                deferPersistence(next, state: &state)
                changed += 1
            }
            return changed
        }
        announce([.inode(ino)])
        keeper?.contentChanged()
        return changed
    }

    /// Turns clean downloaded files back into placeholders (a folder: every such file below it). A single
    /// file that cannot be evicted is an error saying why; in a folder such files are skipped and reported.
    public func evict(_ ino: UInt64) throws(FolioError) -> EvictionReport {
        try refuseVirtual(ino)
        var dropped: [PartialContent] = []
        let (report, evicted) = try state.withLock { state throws(FolioError) -> (EvictionReport, [UInt64]) in
            guard let root = state.nodes[ino] else { throw .notFound("inode \(ino)") }
            var report = EvictionReport()
            var evicted: [UInt64] = []
            for next in try subtree(of: ino, state: &state) {
                guard let node = state.nodes[next], node.kind == .file else { continue }
                if node.state == .placeholder {
                    // A partial file's bytes go with it (those of a download still read go when its reads end).
                    if let kept = state.partials.removeValue(forKey: next) {
                        dropped.append(kept)
                        report.freedBytes += kept.present
                        report.evicted += 1
                        evicted.append(next)
                    } else if (state.progress[next]?.done ?? 0) > 0 {
                        if root.kind == .file { throw .busy("\(node.name) is open; not evicted") }
                        report.skipped.append("\(node.name): is open")
                    }
                    continue
                }
                if let reason = evictionRefusal(node, state: state, explicit: true) {
                    if root.kind == .file { throw .busy("\(node.name) \(reason); not evicted") }
                    report.skipped.append("\(node.name): \(reason)")
                    continue
                }
                report.freedBytes += evictNow(node, state: &state)
                report.evicted += 1
                evicted.append(next)
            }
            return (report, evicted)
        }
        removePartialFiles(dropped)
        for ino in evicted { invalidator?.invalidateInode(ino) }
        return report
    }

    /// Downloads every placeholder at or below `ino` without opening it (listing the folders below it that
    /// were never listed first); returns how many files and bytes were downloaded. Stops at the first failure
    /// (`ENETDOWN` while the provider is offline).
    public func download(_ ino: UInt64) async throws(FolioError) -> (files: Int, bytes: Int64) {
        try refuseVirtual(ino)
        guard let materializer else { throw .offline("no provider connected") }
        try await listSubtree(ino)
        var files = 0
        var bytes: Int64 = 0
        for next in try placeholders(under: ino) {
            try await materializer.materialize(next)
            files += 1
            bytes += node(next)?.size ?? 0
        }
        return (files, bytes)
    }

    /// Pinned placeholders (to download).
    public func pinnedPlaceholders() -> [UInt64] {
        state.withLock { state in
            state.nodes.pinned.filter { ino in
                guard let node = state.nodes[ino] else { return false }
                return node.kind == .file && !node.state.hasLocalContent
            }
        }
    }

    /// Placeholders at or below `ino` (for `folio download`).
    public func placeholders(under ino: UInt64) throws(FolioError) -> [UInt64] {
        try state.withLock { state throws(FolioError) in
            guard state.nodes[ino] != nil else { throw .notFound("inode \(ino)") }
            return try subtree(of: ino, state: &state).filter { next in
                guard let node = state.nodes[next] else { return false }
                return node.kind == .file && !node.state.hasLocalContent
            }
        }
    }

    /// Bytes of content kept locally (every committed version an item points to, and the bytes of partial files).
    public func cachedBytes() -> Int64 {
        state.withLock { state in
            try? loadAllStored(state: &state)  // (a store that cannot be read: what memory has is counted)
            return state.nodes.cachedBytes + state.partials.values.reduce(0) { $0 + $1.present }
        }
    }

    /// Evicts the least recently used clean, unpinned, closed files, and the bytes of partial files nobody has
    /// open, until the local content is at most `limit` bytes (or nothing more can go); never an open, dirty or
    /// pinned one.
    @discardableResult
    public func enforceCacheLimit(_ limit: Int64) -> EvictionReport {
        var dropped: [PartialContent] = []
        let (report, evicted) = state.withLock { state -> (EvictionReport, [UInt64]) in
            try? loadAllStored(state: &state)
            var total = state.nodes.cachedBytes + state.partials.values.reduce(Int64(0)) { $0 + $1.present }
            var report = EvictionReport()
            guard total > limit else { return (report, []) }
            let whole = state.nodes.values.filter { node in
                node.kind == .file && node.cachedContentSize > 0
                    && evictionRefusal(node, state: state, explicit: false) == nil
            }
            let partial = state.partials.keys.compactMap { ino -> Node? in
                guard let node = state.nodes[ino], !node.pinned, state.openCount(ino) == 0 else { return nil }
                return node
            }
            let candidates = (whole + partial).sorted { lastUse(of: $0, state: state) < lastUse(of: $1, state: state) }
            var evicted: [UInt64] = []
            for node in candidates where total > limit {
                let freed: Int64
                if node.state.hasLocalContent {
                    freed = evictNow(node, state: &state)
                } else {
                    guard let kept = state.partials.removeValue(forKey: node.ino) else { continue }
                    dropped.append(kept)
                    freed = kept.present
                }
                total -= freed
                report.freedBytes += freed
                report.evicted += 1
                evicted.append(node.ino)
            }
            return (report, evicted)
        }
        removePartialFiles(dropped)
        for ino in evicted { invalidator?.invalidateInode(ino) }
        if report.evicted > 0 {
            logger.info("cache limit: evicted \(report.evicted) files (\(report.freedBytes) bytes)")
        }
        return report
    }

    /// Why `node` may not be evicted now, or `nil` if it may.
    private func evictionRefusal(_ node: Node, state: borrowing State, explicit: Bool) -> String? {
        switch node.state {
        case .materialized: break
        case .dirty, .uploading, .failed: return "has changes not uploaded yet"
        case .conflicted: return "has a conflict to resolve"
        case .placeholder, .materializing: return "is not downloaded"
        }
        if node.hasPendingUpload { return "has changes not uploaded yet" }
        if node.pinned { return explicit ? "is pinned (unpin it first)" : "is pinned" }
        if state.openCount(node.ino) > 0 || state.sessions[node.ino] != nil { return "is open" }
        return nil
    }

    /// Drops `node`'s local content; returns the bytes freed. The caller checked ``evictionRefusal``.
    private func evictNow(_ node: Node, state: inout State) -> Int64 {
        var placeholder = node
        do {
            try placeholder.apply(.evicted)
        } catch {
            // ``evictionRefusal`` let only clean content through: anything else keeps its content.
            logger.error("not evicting \(node.name): \(error)")
            return 0
        }
        placeholder.contentFile = nil
        state.nodes[node.ino] = placeholder
        state.pageCaches[node.ino] = nil
        deferPersistence(node.ino, state: &state)
        if let file = node.contentFile { discardContent(file, state: &state) }
        return node.size
    }

    /// When `node` was last opened or committed in this run; before that, its modification time.
    private func lastUse(of node: Node, state: borrowing State) -> Timestamp {
        state.virtual.lastOpened[node.ino] ?? node.modificationTime
    }

    /// `ino` and every node below it.
    func subtree(of ino: UInt64, state: inout State) throws(FolioError) -> [UInt64] {
        var result: [UInt64] = []
        var stack = [ino]
        while let next = stack.popLast() {
            result.append(next)
            if state.nodes[next]?.kind == .directory { try loadStoredChildren(of: next, state: &state) }
            if let children = state.children[next] { stack.append(contentsOf: children.values) }
        }
        return result
    }
}
