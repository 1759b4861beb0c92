import Foundation
import SystemPackage

/// One version of an item as `folio versions` lists it.
public struct VersionInfo: Sendable, Codable, Equatable {
    /// `current`, or the provider's version string of a conflict version.
    public var id: String
    /// `local` (made on this machine and not uploaded yet), or `remote`.
    public var origin: String
    /// Size in bytes.
    public var size: Int64
    /// Modification time.
    public var modificationTime: Timestamp
    /// Whether this is the version the item shows.
    public var isCurrent: Bool
    /// Where its content is (a read-only file in the state folder's content cache); `nil` if not downloaded.
    public var path: String?
}

/// A conflicted item the sync engine must look at on the remote.
public struct ConflictedItem: Sendable {
    /// The item's inode.
    public var ino: UInt64
    /// The item.
    public var itemID: ItemID
    /// The container the provider has it in.
    public var container: ContainerID
    /// The remote version the local version is based on now.
    public var remoteVersion: String?
}

extension FolioFileSystem {
    /// Conflicted items whose remote side the sync engine has to look at: new conflicts, and conflicts whose
    /// remote version changed again (a remote version that is not the one the local version is based on
    /// becomes a conflict version). A conflict that only waits for the user is not listed.
    public func conflictedItems() -> [ConflictedItem] {
        state.withLock { state in
            var found: [ConflictedItem] = []
            for itemID in state.sync.conflictFetches {
                guard let ino = state.byItemID[itemID], let node = state.nodes[ino], node.state == .conflicted else {
                    continue
                }
                found.append(ConflictedItem(
                    ino: node.ino, itemID: node.itemID, container: node.remoteContainer ?? node.container,
                    remoteVersion: node.remoteVersion))
            }
            return found
        }
    }

    /// The sync engine looked at a conflicted item's remote side and found nothing new.
    public func settleConflictFetch(_ itemID: ItemID) {
        state.withLock { $0.sync.conflictSettled(itemID) }
    }

    /// Keeps the remote's content of a conflicted item (downloaded to `fileName` in the content cache) as a
    /// conflict version; the local version stays current and is now based on that remote version.
    public func addConflictVersion(_ ino: UInt64, remote: RemoteItem, fileName: String) throws(FolioError) {
        try withStateLockForWriteThrough { state throws(FolioError) in
            guard var node = state.nodes[ino], node.itemID == remote.id else {
                cache.remove(fileName)
                throw .notFound("inode \(ino)")
            }
            var info = stat()
            let size = stat(cache.path(of: fileName).string, &info) == 0 ? Int64(info.st_size) : remote.size
            let version = ConflictVersion(
                itemID: node.itemID, remoteVersion: remote.version, size: size,
                modificationTime: remote.modificationTime, contentFile: fileName)
            node.remoteVersion = remote.version
            try node.apply(.conflictDetected)
            var batch = StoreBatch()
            batch.conflictUpserts = [version]
            batch.upserts = [node]
            try persist(batch, durable: true, state: &state)
            state.nodes[ino] = node
            state.conflicts[node.itemID, default: []].removeAll { $0.remoteVersion == remote.version }
            state.conflicts[node.itemID, default: []].append(version)
            state.sync.conflictSettled(node.itemID)
            logger.warning("\(node.name) changed on the remote and here: both versions are kept (folio versions)")
        }
        invalidator?.invalidateInode(ino)
    }

    /// A new file in the content cache to download a conflict version into (for ``addConflictVersion``).
    public func newContentFile() throws(FolioError) -> (name: String, path: FilePath) {
        let file = try cache.makeFile()
        close(file.fd)
        return (file.name, cache.path(of: file.name))
    }

    /// Drops a content file that was not used after all.
    public func discardContentFile(_ name: String) {
        cache.remove(name)
    }

    /// The remote deleted an item that has local changes: the local version is kept and created again.
    public func recreateDeletedItem(_ ino: UInt64) throws(FolioError) {
        try withStateLockForWriteThrough { state throws(FolioError) in
            guard var node = state.nodes[ino] else { return }
            try node.prepareToBeCreatedAgain(sequence: state.allocateSequence())
            var batch = StoreBatch()
            batch.upserts = [node]
            try persist(batch, state: &state)
            state.nodes[ino] = node
            state.sync.conflictSettled(node.itemID)
            logger.warning("\(node.name) was deleted on the remote but changed here: it is created again")
        }
        notifyUploader()
    }

    /// The current and the conflict versions of an item, current first, then newest first.
    public func versions(of ino: UInt64) throws(FolioError) -> [VersionInfo] {
        try state.withLock { state throws(FolioError) in
            guard let node = state.nodes[ino] else { throw .notFound("inode \(ino)") }
            let local = node.state != .materialized && node.state != .placeholder
            var versions = [VersionInfo(
                id: "current", origin: local ? "local" : "remote", size: node.size,
                modificationTime: node.modificationTime, isCurrent: true,
                path: node.contentFile.map { cache.path(of: $0).string })]
            let conflicts = (state.conflicts[node.itemID] ?? []).sorted { $0.modificationTime > $1.modificationTime }
            for conflict in conflicts {
                versions.append(VersionInfo(
                    id: conflict.remoteVersion, origin: "remote", size: conflict.size,
                    modificationTime: conflict.modificationTime, isCurrent: false,
                    path: cache.path(of: conflict.contentFile).string))
            }
            return versions
        }
    }

    /// Opens a version's content for reading (`current` or a conflict version's id); the caller closes it.
    public func openVersion(_ ino: UInt64, id: String) throws(FolioError) -> Int32 {
        let file = try state.withLock { state throws(FolioError) -> String in
            guard let node = state.nodes[ino] else { throw .notFound("inode \(ino)") }
            if id == "current" {
                guard let file = node.contentFile else { throw .invalidArgument("\(node.name) is not downloaded") }
                return file
            }
            guard let conflict = state.conflicts[node.itemID]?.first(where: { $0.remoteVersion == id }) else {
                throw .notFound("version \(id) of \(node.name)")
            }
            return conflict.contentFile
        }
        return try cache.openForReading(file)
    }

    /// Resolves a conflict: keep the local version, the remote one, or both (each conflict version becomes
    /// a sibling file named `NAME (conflict from the remote, DATE).EXT`, uploaded as a new item).
    public func resolveConflict(_ ino: UInt64, keep: ConflictResolution) throws(FolioError) {
        let changed = try withStateLockForWriteThrough { state throws(FolioError) -> [UInt64] in
            guard var node = state.nodes[ino] else { throw .notFound("inode \(ino)") }
            guard let conflicts = state.conflicts[node.itemID], !conflicts.isEmpty else {
                throw .invalidArgument("\(node.name) has no conflict versions")
            }
            if state.sessions[ino] != nil { throw .busy("\(node.name) is open for writing; close it first") }
            // The remote's latest state is the version the local one is now based on (each fetched version moves
            // the base along); by modification time if that one is not among them.
            let newest = conflicts.first { $0.remoteVersion == node.remoteVersion }
                ?? conflicts.max { $0.modificationTime < $1.modificationTime }!
            var batch = StoreBatch()
            batch.conflictDeletes = [node.itemID]
            var removedFiles: [String] = []
            var siblings: [Node] = []
            switch keep {
            case .local, .both:
                node.generation += 1
                try node.apply(.committed(generation: node.generation))
                node.dirtySequence = state.allocateSequence()
                if keep == .local {
                    removedFiles = conflicts.map(\.contentFile)
                } else {
                    for conflict in conflicts {
                        siblings.append(try conflictSibling(of: node, conflict, state: &state))
                    }
                }
            case .remote:
                if let file = node.contentFile, file != ContentCache.emptyVersion { removedFiles.append(file) }
                removedFiles += conflicts.filter { $0 != newest }.map(\.contentFile)
                node.contentFile = newest.contentFile
                node.size = newest.size
                node.modificationTime = newest.modificationTime
                node.remoteVersion = newest.remoteVersion
                node.generation += 1
                try node.apply(.remoteVersionKept)
                node.metadataDirty = false
            }
            batch.upserts = [node] + siblings
            try persist(batch, durable: true, state: &state)
            state.nodes[ino] = node
            for sibling in siblings { state.insert(sibling) }
            state.conflicts[node.itemID] = nil
            state.sync.conflictSettled(node.itemID)
            state.pageCaches[ino] = nil
            for file in removedFiles { discardContent(file, state: &state) }
            return [ino, node.parent]
        }
        for ino in changed { invalidator?.invalidateInode(ino) }
        notifyUploader()
    }

    /// A new file next to `node` holding a conflict version's content, waiting to be uploaded.
    private func conflictSibling(
        of node: Node, _ conflict: ConflictVersion, state: inout State
    ) throws(FolioError) -> Node {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH.mm.ss"
        let date = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(conflict.modificationTime.seconds)))
        var name = ""
        var counter = 1
        repeat {
            let suffix = counter == 1 ? "" : " \(counter)"
            name = NamePolicy.annotated(node.name, "conflict from the remote, \(date)\(suffix)")
            counter += 1
        } while state.isTaken(node.parent, name)
        try configuration.namePolicy.validate(name)
        return Node(
            ino: state.allocateIno(), itemID: .generate(), container: node.container, parent: node.parent, name: name,
            kind: .file, size: conflict.size, modificationTime: conflict.modificationTime, mode: node.mode,
            uid: node.uid, gid: node.gid, state: .dirty(generation: 1), contentFile: conflict.contentFile,
            generation: 1, dirtySequence: state.allocateSequence())
    }
}
