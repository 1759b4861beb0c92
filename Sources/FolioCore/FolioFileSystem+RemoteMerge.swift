import Foundation

/// What a merge of remote items covers, and so which items it does not name are gone.
enum MergeScope: Equatable {
    /// A full enumeration of the whole container: every folder in it is listed by it; a clean item of the
    /// container that it does not name is gone.
    case container
    /// A full enumeration of the container of which only the folders already listed count (what a provider
    /// without a change history answers for changes): a clean item in a listed folder that it does not name is
    /// gone; items in folders not listed are left for when those are listed.
    case listedFolders
    /// All the children of one folder (its listing): a clean child it does not name is gone.
    case folder(UInt64)
    /// Changes since an anchor: the items named changed; `deleted` (and what they held) are gone.
    case changes(deleted: [ItemID])
}

/// What a merge made stale in kernel caches and has to replay through the mount.
struct MergeOutcome {
    /// Inodes (name `nil`) and entries (a name in a folder) to invalidate.
    var invalidations: [(UInt64, String?)] = []
    /// Remote changes to replay for inotify watchers.
    var replays: [ReplayedChange] = []
    /// A conflict was found or is still waiting for its remote version.
    var conflictSeen = false
    /// Folders whose listing the kernel may have kept is to be dropped (their entries are not invalidated one by
    /// one).
    var listingsChanged: [UInt64] = []
    /// The content keeper has work (pinned items appeared) though nothing is invalidated.
    var wakesKeeper = false
}

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
            let container = node.remoteContainer ?? node.container
            guard let rootIno = state.byItemID[.root(of: container)] ?? (container == .drive ? Self.rootIno : nil)
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
            if firstListing && !appeared {
                for case .created(let parent, let name, .directory) in outcome.replays {
                    if let child = state.child(parent, name) { state.foldersNewFromRemote.remove(child) }
                }
                // Nor for the kernel: it never had these names (a lookup in a folder not listed waits for the
                // listing, and a failed lookup leaves no entry), so one invalidation of the folder's listing (one
                // shown while offline) does instead of one per child; and new placeholders give the content
                // keeper nothing to do unless the folder is pinned.
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
                outcome.replays.removeAll()
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
            guard let rootIno = state.byItemID[.root(of: container)] ?? (container == .drive ? Self.rootIno : nil)
            else { return MergeOutcome() }
            let scope: MergeScope = changes.isFullEnumeration ? .listedFolders : .changes(deleted: changes.deleted)
            return mergeRemote(
                changes.updated, container: container, rootIno: rootIno, scope: scope, batch: &batch, state: &state)
        } applied: { state in
            state.anchors[container] = changes.anchor
            // A folder listing fetched before this change set is older than the anchor now: set aside and taken
            // again (a child the change set passed over, its folder not listed yet, would be lost otherwise).
            state.sync.remoteChanged()
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
            guard let rootIno = state.byItemID[.root(of: container)] ?? (container == .drive ? Self.rootIno : nil)
            else { return MergeOutcome() }
            return mergeRemote(
                item.map { [$0] } ?? [], container: container, rootIno: rootIno,
                scope: .changes(deleted: item == nil ? [id] : []), batch: &batch, state: &state)
        }
    }

    /// Runs a merge under the lock (unless `epoch` is stale), writes its batch, and sends what it invalidated
    /// and replays; `applied` updates the in-memory state once the batch is written.
    private func merge(
        epoch: UInt64?, _ body: (inout State, inout StoreBatch) throws(FolioError) -> MergeOutcome?,
        applied: ((inout State) -> Void)? = nil
    ) throws(FolioError) -> Bool {
        let outcome = try withStateLockForWriteThrough { state throws(FolioError) -> MergeOutcome? in
            if let epoch, !state.sync.isCurrent(epoch) { return nil }
            var batch = StoreBatch()
            guard let outcome = try body(&state, &batch) else { return nil }
            try persist(batch, state: &state)
            applied?(&state)
            if outcome.conflictSeen { keeper?.contentChanged() }
            return outcome
        }
        guard let outcome else { return false }
        deliver(outcome)
        return true
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
        outcome.replays.forEach(invalidator.replay)
    }

    /// The one merge of remote items into the tree, for every ``MergeScope``. Every rule of DESIGN.md §2 about
    /// remote changes is here: a change to a clean item replaces it, a change to an item changed here is a
    /// conflict, a save in its window holds the remote change back, a reference yields its name to a remote
    /// item, an atomic save on the remote keeps the item (``adoptReplacedFiles``), local deletes and uploads in
    /// flight win, and only clean items ever leave the tree. Costs the items named (plus, for the whole
    /// container or the listed folders, a pass over the tree; for a folder, its children).
    func mergeRemote(
        _ items: [RemoteItem], container: ContainerID, rootIno: UInt64, scope: MergeScope,
        batch: inout StoreBatch, state: inout State
    ) -> MergeOutcome {
        var outcome = MergeOutcome()
        let rootID = ItemID.root(of: container)
        let named = Set(items.map(\.id))
        let deleted: Set<ItemID>
        if case .changes(let ids) = scope { deleted = Set(ids) } else { deleted = [] }
        var isChangeSet = false
        if case .changes = scope { isChangeSet = true }
        let isGone: (ItemID) -> Bool = { isChangeSet ? deleted.contains($0) : !named.contains($0) }
        adoptReplacedFiles(items, rootIno: rootIno, container: container, isGone: isGone, batch: &batch, state: &state)
        if scope == .container { markListed(rootIno, batch: &batch, state: &state) }
        var pending = items.filter { !$0.kind.isLocalOnly }
        // Items merged (with their place in the tree), and items looked at: an item waits for its parent when
        // the parent is among the items and not looked at yet.
        var seen: Set<ItemID> = [rootID]
        var looked: Set<ItemID> = [rootID]
        // Known items whose remote place is in a folder the tree does not list: they leave the tree if clean.
        var leaving: [UInt64] = []
        var progress = true
        while !pending.isEmpty && progress {
            progress = false
            var next: [RemoteItem] = []
            for item in pending {
                let parentID = item.parentID ?? rootID
                let waits = scope == .container
                    ? !seen.contains(parentID) : named.contains(parentID) && !looked.contains(parentID)
                if waits {
                    next.append(item)
                    continue
                }
                progress = true
                looked.insert(item.id)
                if state.tombstones[item.id] != nil || state.sync.deletesInFlight.contains(item.id) { continue }
                let parentIno = item.parentID == nil ? rootIno : state.byItemID[parentID]
                guard let parentIno, let parent = state.nodes[parentIno], parent.kind == .directory,
                      scope == .container || parent.childrenListed else {
                    if let ino = state.byItemID[item.id] { leaving.append(ino) }
                    continue
                }
                seen.insert(item.id)
                mergeItem(item, into: parentIno, container: container, scope: scope, outcome: &outcome,
                          batch: &batch, state: &state)
            }
            pending = next
        }
        // Clean items the remote no longer has (or no longer has where the tree looks).
        var gone: [UInt64] = leaving
        switch scope {
        case .container:
            gone += state.nodes.values.filter { $0.container == container && !seen.contains($0.itemID) }.map(\.ino)
        case .listedFolders:
            gone += state.nodes.values.filter {
                $0.container == container && !seen.contains($0.itemID)
                    && (state.nodes[$0.parent]?.childrenListed ?? false)
            }.map(\.ino)
        case .folder(let folder):
            gone += (state.children[folder] ?? [:]).values.filter {
                state.nodes[$0].map { !seen.contains($0.itemID) } ?? false
            }
        case .changes:
            gone += deleted.compactMap { state.byItemID[$0] }
        }
        for ino in gone {
            removeIfClean(ino, keeping: seen, outcome: &outcome, batch: &batch, state: &state)
        }
        return outcome
    }

    /// Merges one remote item whose parent is `parentIno` (a listed folder).
    private func mergeItem(
        _ item: RemoteItem, into parentIno: UInt64, container: ContainerID, scope: MergeScope,
        outcome: inout MergeOutcome, batch: inout StoreBatch, state: inout State
    ) {
        guard let ino = state.byItemID[item.id], let node = state.nodes[ino] else {
            if state.child(parentIno, item.name) != nil {
                // The name is still taken (by an item this merge may yet remove, or a local one): taken again
                // after it, never lost with the anchor moving on.
                state.sync.takeAgain(item.id, in: container)  // (by the poll running now, at its end)
                return
            }
            yieldReference(at: .init(parent: parentIno, name: item.name), batch: &batch, state: &state)
            let node = Node(
                ino: state.allocateIno(), itemID: item.id, container: container, parent: parentIno,
                name: item.name, kind: item.kind, size: item.kind == .file ? item.size : 0,
                modificationTime: item.modificationTime, mode: item.mode, uid: configuration.defaultUID,
                gid: configuration.defaultGID, symlinkTarget: item.symlinkTarget,
                state: item.kind == .file ? .placeholder : .materialized, remoteVersion: item.version,
                pinned: state.nodes[parentIno]?.pinned ?? false, remoteContainer: container,
                childrenListed: item.kind != .directory || scope == .container)
            state.insert(node)
            batch.upserts.append(node)
            outcome.invalidations.append((parentIno, item.name))
            outcome.replays.append(.created(parent: parentIno, name: item.name, kind: item.kind))
            if !node.childrenListed, scope != .container { state.foldersNewFromRemote.insert(node.ino) }
            return
        }
        let surroundings = KnownItemMerge.Surroundings(
            heldBySave: state.saves.isHeld(node.itemID, now: saveNow),
            nameTaken: state.child(parentIno, item.name) != nil,
            folderTimeMayBeEcho: node.kind == .directory && !node.timeDirty && folderTimeMayBeEcho(ino, state: state))
        let merged = KnownItemMerge.merge(
            item, into: node, parent: parentIno, container: container, scope: scope, book: state.sync,
            surroundings: surroundings)
        apply(merged, of: item, to: node, in: parentIno, container: container, outcome: &outcome, batch: &batch,
              state: &state)
    }

    /// Applies the merge of a known item (``KnownItemMerge``): the bookkeeping it asks for, the node's new place
    /// and content, its row, and what is invalidated and replayed.
    private func apply(
        _ merged: KnownItemMerge, of item: RemoteItem, to node: Node, in parentIno: UInt64, container: ContainerID,
        outcome: inout MergeOutcome, batch: inout StoreBatch, state: inout State
    ) {
        let ino = node.ino
        if let error = merged.error { logger.error("\(node.name) keeps its state \(node.state.name): \(error)") }
        switch merged.outcome {
        case .waitForSave:
            // An editor's save may still make a new file take the item over from the version this device had:
            // the remote change waits until the save is decided (a refresh when its window ends), then is an
            // update or, if the item changed here, a conflict. The anchor moves on: taken again then.
            state.sync.remoteChangeWaitsForSave(item.id, in: container)
        case .takeAgain:
            state.sync.takeAgain(item.id, in: container)  // (by the poll running now, at its end)
        case .conflict:
            _ = state.sync.conflictFound(node.itemID)  // the keeper is woken once the merge is applied
            outcome.conflictSeen = true
        case .unchanged, .updated:
            break
        }
        if let origin = merged.origin {
            yieldReference(at: .init(parent: parentIno, name: item.name), batch: &batch, state: &state)
            state.children[origin.parent]?[origin.name] = nil
            outcome.invalidations.append((origin.parent, origin.name))
            state.children[parentIno, default: [:]][item.name] = ino
            outcome.invalidations.append((parentIno, item.name))
        }
        if let file = merged.droppedContent, state.openCount(ino) == 0 {
            discardContent(file, state: &state)
        }
        if merged.contentReplaced { outcome.invalidations.append((ino, nil)) }
        // Written only when something changed: a listing of a thousand unchanged children writes no row.
        if merged.node != node {
            state.nodes[ino] = merged.node
            batch.upserts.append(merged.node)
        }
        if let origin = merged.origin {
            outcome.replays.append(.moved(
                ino: ino, fromParent: origin.parent, fromName: origin.name, toParent: parentIno, toName: item.name))
        }
        if merged.contentReplaced || merged.attributesChanged {
            outcome.replays.append(.changed(ino: ino, content: merged.contentReplaced))
        }
    }

    /// Marks a folder listed (a full enumeration of its container named all its children).
    private func markListed(_ ino: UInt64, batch: inout StoreBatch, state: inout State) {
        guard var node = state.nodes[ino], node.kind == .directory, !node.childrenListed else { return }
        node.childrenListed = true
        state.nodes[ino] = node
        batch.upserts.append(node)
    }

    /// Whether the remote's delete of `node` (or its move to where the tree does not look) may take it out of the
    /// tree: nothing about it waits for upload or for a decision.
    private func isClean(_ node: Node, state: borrowing State) -> Bool {
        node.remoteVersion != nil
            && (!node.hasPendingUpload || (node.waitsOnlyForTime && !state.sync.uploadsInFlight.contains(node.itemID)))
            && !node.itemID.isContainerRoot && !node.kind.isLocalOnly && node.state != .conflicted
    }

    /// Takes a node the remote no longer has out of the tree with what it holds, as far as they are clean (a
    /// folder stays while anything in it stays, and so does an item in `keeping`: the remote still has it).
    @discardableResult
    private func removeIfClean(
        _ ino: UInt64, keeping: Set<ItemID>, outcome: inout MergeOutcome, batch: inout StoreBatch,
        state: inout State
    ) -> Bool {
        guard let node = state.nodes[ino] else { return true }
        guard !node.itemID.isContainerRoot, isClean(node, state: state) else { return false }
        for child in Array((state.children[ino] ?? [:]).values) {
            guard let childNode = state.nodes[child], !keeping.contains(childNode.itemID) else { continue }
            removeIfClean(child, keeping: keeping, outcome: &outcome, batch: &batch, state: &state)
        }
        guard state.children[ino]?.isEmpty ?? true else { return false }
        // References kept in a folder the remote deleted go with it (they are only pointers).
        for name in (state.references[node.ino] ?? [:]).keys {
            let location = ExternalReference.Location(parent: node.ino, name: name)
            state.removeReference(at: location)
            batch.referenceDeletes.append(location)
        }
        for reference in state.references(to: node.itemID) {
            state.removeReference(at: reference.location)
            batch.referenceDeletes.append(reference.location)
            outcome.invalidations.append((reference.parent, reference.name))
        }
        batch.deletes.append(node.ino)
        outcome.invalidations.append((node.parent, node.name))
        outcome.replays.append(
            .removed(parent: node.parent, name: node.name, attributes: attributes(of: node, state: state)))
        state.detach(node.ino)
        if state.isReferenced(node.ino) {
            state.orphans[node.ino] = node
        } else if let file = node.contentFile {
            discardContent(file, state: &state)
        }
        return true
    }

    /// Atomic saves on the remote that the provider took for a new item (a new file renamed over the old one
    /// while it had no record of the old one, say just after it started): a file with an id the tree does
    /// not know, at the place of a file the remote no longer has (`isGone`), is the same document, changed
    /// (DESIGN.md §2: an atomic save keeps the item). The node takes the new id, references to it follow, and
    /// the merge then sees a new version: an update, or a conflict if it changed here too (an upload of ours
    /// that may have landed cannot be the new file: it would have kept the old id). Left alone: items whose
    /// upload is running, items with a metadata change waiting (renamed or moved here: another document may
    /// have taken the name), and items with conflict versions.
    private func adoptReplacedFiles(
        _ items: [RemoteItem], rootIno: UInt64, container: ContainerID, isGone: (ItemID) -> Bool,
        batch: inout StoreBatch, state: inout State
    ) {
        for item in items where item.kind == .file && state.byItemID[item.id] == nil {
            let parentIno = item.parentID.map { state.byItemID[$0] } ?? rootIno
            guard let parentIno, let ino = state.child(parentIno, item.name), var node = state.nodes[ino],
                node.kind == .file, node.remoteVersion != nil, !node.metadataDirty,
                (node.remoteContainer ?? node.container) == container, isGone(node.itemID),
                !state.sync.uploadsInFlight.contains(node.itemID), state.conflicts[node.itemID] == nil,
                state.tombstones[item.id] == nil, !state.sync.deletesInFlight.contains(item.id)
            else { continue }
            logger.info("\(node.name) was replaced on the remote: the same document, changed (now \(item.id))")
            let previous = node.itemID
            state.byItemID[previous] = nil
            state.sync.itemReplaced(previous)
            node.itemID = item.id
            state.byItemID[item.id] = ino
            state.nodes[ino] = node
            batch.upserts.append(node)
            for reference in state.references(to: previous) {
                let followed = ExternalReference(parent: reference.parent, name: reference.name, target: item.id)
                state.removeReference(at: reference.location)
                state.insertReference(followed)
                batch.referenceUpserts.append(followed)
            }
        }
    }

    /// A remote item takes the name a reference had: the reference (a local pointer) gives way.
    private func yieldReference(
        at location: ExternalReference.Location, batch: inout StoreBatch, state: inout State
    ) {
        guard let reference = state.removeReference(at: location) else { return }
        logger.notice("the reference '\(reference.name)' gave way to a remote item of the same name")
        batch.referenceDeletes.append(location)
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
