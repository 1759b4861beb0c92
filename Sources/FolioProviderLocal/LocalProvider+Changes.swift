import FolioCore
import SystemPackage

extension LocalProvider {
    /// The container's position in its change journal now (see ``RemoteLayout`` "Change anchors").
    public func currentAnchor(in container: ContainerID) async throws -> SyncAnchor {
        let what = "anchor of \(container)"
        return try await recognizing(what) {
            _ = try await admit(what)
            let position = try withTree(what) { tree in
                _ = try tree.containerDirectory(container)
                try tree.flushJournal()
                return try tree.journal(for: container).position
            }
            return JournalAnchor(remoteID: remoteID, position: position).anchor
        }
    }

    /// One page of a folder's children, by name; the cursor is the last name of the page. Reads the folder's
    /// entries and looks at the page's children only (see ``RemoteTree/listFolder(_:in:after:limit:)``): a
    /// page of `n` costs one `readdir` of the folder and `n` `lstat`s and attribute reads, never a look at
    /// another folder (except, once, finding the folder itself when this process does not know where it is).
    public func enumerateFolder(
        _ folder: ItemID?, in container: ContainerID, from cursor: PageCursor?, pageSize: Int
    ) async throws -> FolderPage {
        let what = "list \(folder?.rawValue ?? "the root") of \(container)"
        guard pageSize > 0 else { throw FolioError.invalidArgument("\(what): page size \(pageSize)") }
        let after = try cursor.map { cursor in
            guard cursor.rawValue.hasPrefix(Self.cursorPrefix) else {
                throw FolioError.anchorExpired("\(what): \(cursor.rawValue) is not a cursor of this provider")
            }
            return String(cursor.rawValue.dropFirst(Self.cursorPrefix.count))
        }
        return try await recognizing(what) {
            _ = try await admit(what)
            let page = try withTree(what) { tree in
                try tree.listFolder(folder, in: container, after: after, limit: pageSize)
            }
            return FolderPage(items: page.items, next: page.next.map { PageCursor(Self.cursorPrefix + $0) })
        }
    }

    /// What starts a page cursor (the name after it is the last one listed).
    private static var cursorPrefix: String { "after:" }

    /// One item's metadata, found through the index (checked against the disk), or else folder by folder
    /// (``RemoteTree/search(_:in:)``: up to the whole container, for an id this process never met).
    public func item(_ id: ItemID, in container: ContainerID) async throws -> RemoteItem {
        let what = "look up \(id) in \(container)"
        return try await recognizing(what) {
            _ = try await admit(what)
            return try withTree(what) { tree in
                guard id != ItemID.root(of: container), let found = try tree.locate(id, in: container) else {
                    throw FolioError.notFound("item \(id) in \(container)")
                }
                let item = try tree.remoteItem(for: found)
                if tree.indexes[container]?.observe(item, isNew: true) == true { tree.journalChange(of: item) }
                return item
            }
        }
    }

    /// The changes in a container since `anchor`, from its change journal: at most
    /// ``RemoteTree/changesPerCall`` records (then ``RemoteChanges/moreComing``), each item as it is now.
    ///
    /// Changes made by hand are journaled first: the folders the watcher saw change (the first call starts it)
    /// are listed again and compared with what was seen of them; every listed folder is, once, when the watcher
    /// has just started or its queue overflowed. Only folders listed in this process are compared (the others
    /// have no baseline: their content is what the caller lists when it asks). So a change by hand made before
    /// the call is in its answer. Without a watcher (inotify not available), the next
    /// ``RemoteTree/sweepFoldersPerCall`` listed folders are listed again at each call instead: a change by hand
    /// is reported within (listed folders ÷ sweep size) calls. Cost: the records read plus the children of the
    /// folders that changed (or were swept), never the rest of the remote. An anchor of another remote or
    /// container, garbage, or one older than the journal holds is `.anchorExpired`.
    public func changes(in container: ContainerID, since anchor: SyncAnchor) async throws -> RemoteChanges {
        let what = "changes in \(container)"
        return try await recognizing(what) {
            _ = try await admit(what)
            guard let parsed = JournalAnchor(anchor), parsed.remoteID == remoteID else {
                throw FolioError.anchorExpired("\(what): \(anchor.rawValue) is not an anchor of this remote")
            }
            let watching = watcherForChanges()
            let directory = layout.directory(of: container)
            let seen = watching?.takeChangedFolders(under: directory)
            do {
                return try answer(since: parsed, in: container, seen: seen, watching: watching, what: what)
            } catch {
                // Not acted on: the next call takes it again. A remote that went away gets a new watcher when it
                // is back (the one it had may watch a folder that is no longer the remote's).
                if let seen { watching?.giveBack(seen, under: directory) }
                if let failure = error as? FolioError, case .offline = failure { stopWatching() }
                throw error
            }
        }
    }

    /// ``changes(in:since:)`` once the watcher's news is taken: the folders it saw change (or the sweep's)
    /// listed again, then the journal's records after `anchor`.
    private func answer(
        since anchor: JournalAnchor, in container: ContainerID,
        seen: (paths: [FilePath], overflowed: Bool)?, watching: RemoteWatcher?, what: String
    ) throws -> RemoteChanges {
        let remoteID = self.remoteID
        return try withTree(what) { tree in
            _ = try tree.containerDirectory(container)
            if let seen {
                // Every change inotify can see is in what the watcher saw: the full sweep only when it may have
                // missed some (its queue overflowed, it has just started, it ran out of watches); otherwise one
                // folder a second, for what inotify does not see (another machine writing to a network
                // folder, a truncate by path).
                try tree.refresh(tree.listedFolders(at: seen.paths, in: container), in: container)
                if seen.overflowed {
                    try tree.sweep(container, folders: .max)
                    tree.watchListedFolders()  // at their paths of now: moves may be among the news lost
                } else if watching?.missesFolders.load(ordering: .relaxed) == true {
                    try tree.sweep(container, folders: tree.sweepFoldersPerCall)
                } else if tree.slowSweepIsDue(in: container) {
                    try tree.sweep(container, folders: 1)
                }
            } else {
                try tree.sweep(container, folders: tree.sweepFoldersPerCall)
            }
            try tree.flushJournal()
            let batch = try tree.journal(for: container).records(after: anchor.position, limit: tree.changesPerCall)
            let (updated, deleted) = try tree.resolve(batch.records, in: container)
            return RemoteChanges(
                updated: updated, deleted: deleted,
                anchor: JournalAnchor(remoteID: remoteID, position: batch.position).anchor,
                isFullEnumeration: false, moreComing: batch.moreComing)
        }
    }

    /// Expires every anchor of `container`: the next ``changes(in:since:)`` from an anchor taken before fails
    /// with `.anchorExpired` (what a journal trimmed past its size does to old anchors; for tests). Deleting
    /// `DIR/.folio/journal/<container id>` by hand does the same.
    public func expireAnchors(in container: ContainerID) throws {
        try withTree("expire anchors of \(container)") { tree in try tree.expireAnchors(in: container) }
    }
}
