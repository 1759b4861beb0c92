import Foundation

extension FolioFileSystem {
    /// Merges a container's full enumeration into the tree: new items appear as placeholders, clean items
    /// take the remote metadata, and clean items the remote no longer has disappear; every folder of the
    /// container is listed afterwards. Items with local changes are left alone (the sync engine handles them).
    /// An enumeration taken before one of our own uploads landed (`epoch` is no longer current) is stale and
    /// ignored: it would undo that upload. Returns whether it was applied.
    @discardableResult
    public func applyEnumeration(
        of container: Container, items: [RemoteItem], epoch: UInt64? = nil
    ) throws(FolioError) -> Bool {
        try merge(epoch: epoch) { state, batch throws(FolioError) -> MergeOutcome? in
            try loadAllStored(state: &state)  // (what the enumeration does not name is gone: all of it is looked at)
            let rootIno = try containerRoot(container, batch: &batch, state: &state)
            return mergeRemote(items, container: container.id, rootIno: rootIno, scope: .container, batch: &batch,
                               state: &state)
        }
    }

    /// Merges the listing of one folder (all its children, every page) into the tree and marks the folder
    /// listed: new children appear, clean ones take the remote metadata, and clean children the listing does
    /// not name are gone (with what they held). A listing taken before one of our own uploads landed (`epoch`
    /// no longer current) is set aside: returns false, and the caller lists again. A folder that is gone or no
    /// longer needs listing is left alone (true).
    @discardableResult
    public func applyFolderListing(
        _ folder: UInt64, items: [RemoteItem], epoch: UInt64? = nil
    ) throws(FolioError) -> Bool {
        try merge(epoch: epoch) { state, batch throws(FolioError) -> MergeOutcome? in
            guard var node = state.nodes[folder], node.kind == .directory else { return MergeOutcome() }
            try loadStoredChildren(of: folder, state: &state)
            try loadStoredItems(items.map(\.id), state: &state)
            let container = node.remoteContainer ?? node.container
            guard let rootIno = state.rootIno(of: container)
            else { return MergeOutcome() }
            state.unconfirmedListings.remove(folder)
            // A change set fetched before this listing is older than it: set aside and fetched again (it could
            // say deleted of a child this listing found moved here).
            state.sync.remoteChanged()
            let firstListing = !node.childrenListed
            if firstListing {
                node.childrenListed = true
                state.nodes[folder] = node
                batch.upserts.append(node)
            }
            let listed = items.map { item in
                var item = item
                item.parentID = folder == rootIno ? nil : node.itemID  // a listing names its own folder
                return item
            }
            var outcome = mergeRemote(
                listed, container: container, rootIno: rootIno, scope: .folder(folder), batch: &batch, state: &state)
            // A folder listed for the first time was never shown: its children are no news for watchers. Unless it
            // appeared by a remote change since start (its creation was replayed): what it holds is new too.
            let appeared = state.foldersNewFromRemote.remove(folder) != nil
            if firstListing {
                if !appeared {
                    for case .created(let parent, let name, .directory) in outcome.replays {
                        if let child = state.child(parent, name) { state.foldersNewFromRemote.remove(child) }
                    }
                }
                // Nor for the kernel, either way: it never had these names (a lookup in a folder not listed waits
                // for the listing, and a failed lookup leaves no entry), so one invalidation of the folder's listing
                // (one shown while offline) does instead of one per child (each takes the folder's lock in the
                // kernel, which a reader of the folder holds); and new placeholders give the content keeper nothing
                // to do unless the folder is pinned.
                var created: [UInt64: Set<String>] = [:]
                for case .created(let parent, let name, _) in outcome.replays {
                    created[parent, default: []].insert(name)
                }
                let before = outcome.invalidations.count
                outcome.invalidations.removeAll { ino, name in
                    name.map { created[ino]?.contains($0) ?? false } ?? false
                }
                if outcome.invalidations.count < before { outcome.listingsChanged.append(folder) }
                outcome.wakesKeeper = node.pinned && !created.isEmpty
                if !appeared { outcome.replays.removeAll() }
            }
            return outcome
        }
    }

    /// Merges a change set of `container` (``Provider/changes(in:since:)``) and stores its anchor in the same
    /// write. Changed items in listed folders are merged (new ones appear, moved ones move); an item moved into
    /// a folder not listed leaves the tree if clean; items the tree does not know whose folder is not listed are
    /// ignored; deleted items (and what a deleted folder held) go if clean. A change set that is a full
    /// enumeration is merged as the listing of every listed folder. A change set taken before one of our own
    /// uploads landed (`epoch` no longer current) is set aside without storing its anchor: returns false.
    @discardableResult
    public func applyChanges(
        _ changes: RemoteChanges, in container: ContainerID, epoch: UInt64? = nil
    ) throws(FolioError) -> Bool {
        try merge(epoch: epoch) { state, batch throws(FolioError) -> MergeOutcome? in
            batch.anchors[container] = changes.anchor
            if changes.isFullEnumeration {
                try loadAllStored(state: &state)
            } else {
                try loadStoredItems(changes.updated.map(\.id) + changes.deleted, state: &state)
                try loadStoredFolders(of: changes.updated, in: container, state: &state)
            }
            guard let rootIno = state.rootIno(of: container)
            else { return MergeOutcome() }
            let scope: MergeScope = changes.isFullEnumeration ? .listedFolders : .changes(deleted: changes.deleted)
            return mergeRemote(
                changes.updated, container: container, rootIno: rootIno, scope: scope, batch: &batch, state: &state)
        } applied: { state in
            state.anchors[container] = changes.anchor
            // A folder listing fetched before this change set is older than the anchor now: set aside and taken
            // again (a child the change set passed over, its folder not listed yet, would be lost otherwise). An
            // empty change set passed nothing over: a listing that takes longer than a poll (a folder of 10,000 on
            // a server) would otherwise be set aside by every poll that found nothing, again and again.
            if !changes.updated.isEmpty || !changes.deleted.isEmpty || changes.isFullEnumeration {
                state.sync.remoteChanged()
            }
        }
    }

    /// The items whose remote state has to be taken again, outside any change set (a delete of ours the remote
    /// refused: the item changed there), with their containers.
    public func itemsToTakeAgain() -> [(id: ItemID, container: ContainerID)] {
        state.withLock { state in state.sync.itemsToTakeAgain.map { (id: $0.key, container: $0.value) } }
    }

    /// Merges the remote state of one item taken again (``itemsToTakeAgain()``): `item` `nil` if the remote no
    /// longer has it. The anchor stays as it is. Set aside (false) if it raced with our own uploads (`epoch`).
    @discardableResult
    public func applyItemTakenAgain(
        _ item: RemoteItem?, id: ItemID, in container: ContainerID, epoch: UInt64? = nil
    ) throws(FolioError) -> Bool {
        try merge(epoch: epoch) { state, batch throws(FolioError) -> MergeOutcome? in
            // (The merge may ask for it again: a name still taken, a save still undecided.)
            state.sync.takingAgain(id)
            try loadStoredItems([id], state: &state)
            if let item { try loadStoredFolders(of: [item], in: container, state: &state) }
            guard let rootIno = state.rootIno(of: container)
            else { return MergeOutcome() }
            return mergeRemote(
                item.map { [$0] } ?? [], container: container, rootIno: rootIno,
                scope: .changes(deleted: item == nil ? [id] : []), batch: &batch, state: &state)
        }
    }

    /// Reads the stored children of the folders `items` are in (an item may take the name of one not read yet).
    private func loadStoredFolders(
        of items: [RemoteItem], in container: ContainerID, state: inout State
    ) throws(FolioError) {
        guard !state.stored.isComplete else { return }
        let root = state.rootIno(of: container)
        let folders = Set(items.compactMap { item in item.parentID.map { state.byItemID[$0] } ?? root })
        try loadStoredChildren(of: folders, state: &state)
    }

    /// Runs a merge under the lock (unless `epoch` is stale) and queues its batch, then, outside the lock, waits for
    /// the batch to be written (the merge's rows and its anchor in one transaction) and sends what it invalidated and
    /// replays; `applied` updates the in-memory state as the batch is queued. A batch that cannot be written is
    /// written again from memory by the next write (its rows and anchor are staged again), and the error is thrown.
    /// (A merge that changes references writes them through, under the lock: rare, and they are not queued.)
    private func merge(
        epoch: UInt64?, _ body: (inout State, inout StoreBatch) throws(FolioError) -> MergeOutcome?,
        applied: ((inout State) -> Void)? = nil
    ) throws(FolioError) -> Bool {
        var stale: [PartialContent] = []
        let merged = try state.withLock { state throws(FolioError) -> (MergeOutcome, UInt64?)? in
            if let epoch, !state.sync.isCurrent(epoch) { return nil }
            var batch = StoreBatch()
            guard let outcome = try body(&state, &batch) else { return nil }
            let departedContent = contentOfDepartedFolders(state: &state)
            var ticket: UInt64?
            if batch.referenceUpserts.isEmpty && batch.referenceDeletes.isEmpty {
                ticket = try enqueuePersist(batch, state: &state)
            } else {
                try persist(batch, state: &state)
            }
            if !departedContent.isEmpty {  // (with the next write: the rows naming them are gone now)
                state.unsavedFileRemovals += departedContent
                scheduleGroupWrite(state: &state)
            }
            applied?(&state)
            if outcome.conflictSeen { keeper?.contentChanged() }
            // Bytes kept of a version the remote replaced, or of an item it removed, go.
            if !state.partials.isEmpty { stale = stalePartials(state: &state) }
            return (outcome, ticket)
        }
        removePartialFiles(stale)
        guard let (outcome, ticket) = merged else { return false }
        deliver(outcome)
        try writeStore(through: ticket)
        return true
    }

    /// The content files of the stored children never read of the folders a merge took out of the tree (deleted
    /// on the remote, or moved where this device does not look), read before the group write deletes their rows:
    /// they were downloaded before this run, and no node will name them again. Not those the merge discards
    /// itself, nor the shared empty version. (A store that cannot be read leaves them to the next start's garbage
    /// collection: the merge goes on.)
    private func contentOfDepartedFolders(state: inout State) -> [String] {
        let departed = state.stored.takeDeparted()
        guard !departed.isEmpty else { return [] }
        var seen = Set(state.unsavedFileRemovals)
        var files: [String] = []
        for folder in departed {
            let rows: [Node]
            do {
                rows = try store.loadChildren(of: folder)
            } catch {
                logger.warning("the content of files in a removed folder stays until the next start: \(error)")
                continue
            }
            for row in rows where state.node(row.ino) == nil {
                guard let file = row.contentFile, file != ContentCache.emptyVersion, seen.insert(file).inserted
                else { continue }
                files.append(file)
            }
        }
        return files
    }

    /// Sends a merge's invalidations and replays to every mount.
    private func deliver(_ outcome: MergeOutcome) {
        if !outcome.invalidations.isEmpty || outcome.wakesKeeper { keeper?.contentChanged() }
        guard let invalidator else { return }
        outcome.listingsChanged.forEach(invalidator.invalidateInode)
        for (ino, name) in outcome.invalidations {
            if let name {
                invalidator.invalidateEntry(parent: ino, name: name)
            } else {
                invalidator.invalidateInode(ino)
            }
        }
        // Listings of the folders that changed (the kernel may cache them).
        for parent in Set(outcome.invalidations.compactMap { $0.1 == nil ? nil : $0.0 }) {
            invalidator.invalidateInode(parent)
        }
        if !outcome.replays.isEmpty { invalidator.replay(outcome.replays) }
    }

    /// The one merge of remote items into the tree (``RemoteMerge``), at this moment, with what it says logged and
    /// the content files it took out of use removed by a group write.
    func mergeRemote(
        _ items: [RemoteItem], container: ContainerID, rootIno: UInt64, scope: MergeScope,
        batch: inout StoreBatch, state: inout State
    ) -> MergeOutcome {
        let merge = RemoteMerge(
            container: container, rootIno: rootIno, scope: scope,
            owner: (configuration.defaultUID, configuration.defaultGID), now: saveNow,
            describe: { node, state in self.attributes(of: node, state: state) })
        let outcome = merge.merge(items, batch: &batch, state: &state)
        for (level, message) in outcome.notes { logger.log(level: level, "\(message)") }
        if outcome.discardedContent { scheduleGroupWrite(state: &state) }
        return outcome
    }

    /// The root node of a container, created on first sight (not listed yet): the Drive's root is the full
    /// view's root; a public app container is a folder in it named by its display name; a private one is outside
    /// the view.
    func containerRoot(
        _ container: Container, batch: inout StoreBatch, state: inout State
    ) throws(FolioError) -> UInt64 {
        if container.id == .drive { return Self.rootIno }
        let rootID = ItemID.root(of: container.id)
        if let ino = state.byItemID[rootID] { return ino }
        var name = container.displayName
        if state.child(Self.rootIno, name) != nil { name = "\(container.displayName) (\(container.id))" }
        let node = Node(
            ino: state.allocateIno(), itemID: rootID, container: container.id,
            parent: container.isPublic ? Self.rootIno : 0, name: name, kind: .directory,
            modificationTime: .now(), mode: 0o755, uid: configuration.defaultUID, gid: configuration.defaultGID,
            state: .materialized, remoteVersion: "root", childrenListed: false)
        state.insert(node)
        batch.upserts.append(node)
        return node.ino
    }
}
