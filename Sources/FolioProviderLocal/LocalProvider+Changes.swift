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
            let watching = watchesForChanges.load(ordering: .relaxed) ? startWatching() : watcher.withLock { $0 }
            let seen = watching?.takeChangedFolders(under: layout.directory(of: container))
            let remoteID = self.remoteID
            return try withTree(what) { tree in
                _ = try tree.containerDirectory(container)
                if let seen {
                    // Every change made so far is in what the watcher saw: no sweep, unless it may have missed
                    // some (its queue overflowed, or it has just started, or it ran out of watches).
                    try tree.refresh(tree.listedFolders(at: seen.paths, in: container), in: container)
                    if seen.overflowed {
                        try tree.sweep(container, folders: .max)
                    } else if watching?.missesFolders.load(ordering: .relaxed) == true {
                        try tree.sweep(container, folders: tree.sweepFoldersPerCall)
                    }
                } else {
                    try tree.sweep(container, folders: tree.sweepFoldersPerCall)
                }
                try tree.flushJournal()
                let batch = try tree.journal(for: container).records(
                    after: parsed.position, limit: tree.changesPerCall)
                let (updated, deleted) = try tree.resolve(batch.records, in: container)
                return RemoteChanges(
                    updated: updated, deleted: deleted,
                    anchor: JournalAnchor(remoteID: remoteID, position: batch.position).anchor,
                    isFullEnumeration: false, moreComing: batch.moreComing)
            }
        }
    }

    /// Expires every anchor of `container`: the next ``changes(in:since:)`` from an anchor taken before fails
    /// with `.anchorExpired` (what a journal trimmed past its size does to old anchors; for tests). Deleting
    /// `DIR/.folio/journal/<container id>` by hand does the same.
    public func expireAnchors(in container: ContainerID) throws {
        try withTree("expire anchors of \(container)") { tree in try tree.expireAnchors(in: container) }
    }
}
