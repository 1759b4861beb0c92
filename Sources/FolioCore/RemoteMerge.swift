import Logging

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
    /// Content files were taken out of use (``State/unsavedFileRemovals``): a group write removes them.
    var discardedContent = false
    /// What the merge has to say in the log, in order.
    var notes: [(level: Logger.Level, message: String)] = []

    /// Adds a line for the log.
    mutating func note(_ level: Logger.Level, _ message: String) {
        notes.append((level, message))
    }
}

/// The one merge of remote items into the tree, for every ``MergeScope``, as a function of values: the state
/// and the items in, the changed state, the rows to write (``StoreBatch``) and what to invalidate, replay and log
/// (``MergeOutcome``) out; no I/O, no lock, no clock (the moment is given). Every rule of DESIGN.md §2 about
/// remote changes is here: a change to a clean item replaces it, a change to an item changed here is a
/// conflict, a save in its window holds the remote change back, a reference yields its name to a remote item,
/// an atomic save on the remote keeps the item (``adoptReplacedFiles``), local deletes and uploads in flight win,
/// and only clean items ever leave the tree. Costs the items named (plus, for the whole container or the listed
/// folders, a pass over the tree; for a folder, its children). One known item's merge is ``KnownItemMerge``.
struct RemoteMerge {
    /// The container the items are of.
    let container: ContainerID
    /// Its root's inode.
    let rootIno: UInt64
    /// What the items cover, and so which items they do not name are gone.
    let scope: MergeScope
    /// The owner of new nodes.
    let owner: (uid: UInt32, gid: UInt32)
    /// The moment of the merge, for the editors' save windows.
    let now: SaveTracker.Moment
    /// A node's attributes as the mount reports them (for the replay of a removal).
    let describe: (Node, borrowing State) -> Attributes

    /// Merges `items` into `state`, adding the rows to write to `batch`; returns what to invalidate, replay and
    /// log.
    func merge(_ items: [RemoteItem], batch: inout StoreBatch, state: inout State) -> MergeOutcome {
        var outcome = MergeOutcome()
        let rootID = ItemID.root(of: container)
        let named = Set(items.map(\.id))
        let deleted: Set<ItemID>
        if case .changes(let ids) = scope { deleted = Set(ids) } else { deleted = [] }
        var isChangeSet = false
        if case .changes = scope { isChangeSet = true }
        let isGone: (ItemID) -> Bool = { isChangeSet ? deleted.contains($0) : !named.contains($0) }
        adoptReplacedFiles(items, isGone: isGone, outcome: &outcome, batch: &batch, state: &state)
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
                mergeItem(item, into: parentIno, outcome: &outcome, batch: &batch, state: &state)
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
            // (An item that moved to another container is reported deleted by the one it left: it is gone from
            // here only if that is still where it is.)
            gone += deleted.compactMap { state.byItemID[$0] }.filter { ino in
                state.nodes[ino].map { ($0.remoteContainer ?? $0.container) == container } ?? false
            }
        }
        for ino in gone {
            removeIfClean(ino, keeping: seen, outcome: &outcome, batch: &batch, state: &state)
        }
        return outcome
    }

    /// Merges one remote item whose parent is `parentIno` (a listed folder).
    private func mergeItem(
        _ item: RemoteItem, into parentIno: UInt64, outcome: inout MergeOutcome, batch: inout StoreBatch,
        state: inout State
    ) {
        guard let ino = state.byItemID[item.id], let node = state.nodes[ino] else {
            if state.child(parentIno, item.name) != nil {
                // The name is still taken (by an item this merge may yet remove, or a local one): taken again
                // after it, never lost with the anchor moving on.
                state.sync.takeAgain(item.id, in: container)  // (by the poll running now, at its end)
                return
            }
            yieldReference(
                at: .init(parent: parentIno, name: item.name), outcome: &outcome, batch: &batch, state: &state)
            var node = Node(
                ino: state.allocateIno(), itemID: item.id, container: container, parent: parentIno,
                name: item.name, kind: item.kind, size: item.kind == .file ? item.size : 0,
                modificationTime: item.modificationTime, mode: item.mode, uid: owner.uid,
                gid: owner.gid, symlinkTarget: item.symlinkTarget,
                state: item.kind == .file ? .placeholder : .materialized, remoteVersion: item.version,
                pinned: state.nodes[parentIno]?.pinned ?? false, remoteContainer: container,
                childrenListed: item.kind != .directory || scope == .container)
            node.mergeRemoteTags(item.tags)
            state.insert(node)
            batch.upserts.append(node)
            outcome.invalidations.append((parentIno, item.name))
            outcome.replays.append(.created(parent: parentIno, name: item.name, kind: item.kind))
            if !node.childrenListed, scope != .container { state.foldersNewFromRemote.insert(node.ino) }
            return
        }
        let surroundings = KnownItemMerge.Surroundings(
            heldBySave: state.saves.isHeld(node.itemID, now: now),
            nameTaken: state.child(parentIno, item.name) != nil,
            folderTimeMayBeEcho: node.kind == .directory && !node.timeDirty
                && Self.folderTimeMayBeEcho(ino, state: state))
        let merged = KnownItemMerge.merge(
            item, into: node, parent: parentIno, container: container, scope: scope, book: state.sync,
            surroundings: surroundings)
        apply(merged, of: item, to: node, in: parentIno, outcome: &outcome, batch: &batch, state: &state)
    }

    /// Applies the merge of a known item (``KnownItemMerge``): the bookkeeping it asks for, the node's new place
    /// and content, its row, and what is invalidated and replayed.
    private func apply(
        _ merged: KnownItemMerge, of item: RemoteItem, to node: Node, in parentIno: UInt64,
        outcome: inout MergeOutcome, batch: inout StoreBatch, state: inout State
    ) {
        let ino = node.ino
        if let error = merged.error {
            outcome.note(.error, "\(node.name) keeps its state \(node.state.name): \(error)")
        }
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
            yieldReference(
                at: .init(parent: parentIno, name: item.name), outcome: &outcome, batch: &batch, state: &state)
            state.children[origin.parent]?[origin.name] = nil
            outcome.invalidations.append((origin.parent, origin.name))
            state.children[parentIno, default: [:]][item.name] = ino
            outcome.invalidations.append((parentIno, item.name))
        }
        if let file = merged.droppedContent, state.openCount(ino) == 0 {
            discardContent(file, outcome: &outcome, state: &state)
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
    /// tree: nothing about it waits for upload or for a decision. (A change of its tags waiting does not keep it:
    /// tags are metadata that merges, never a reason to bring back an item deleted elsewhere.)
    private func isClean(_ node: Node, state: borrowing State) -> Bool {
        node.remoteVersion != nil
            && (!node.hasPendingUploadBesidesTags
                || (node.waitsOnlyForTime && !state.sync.uploadsInFlight.contains(node.itemID)))
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
            .removed(parent: node.parent, name: node.name, attributes: describe(node, state)))
        state.detach(node.ino)
        if state.isReferenced(node.ino) {
            state.orphans[node.ino] = node
        } else if let file = node.contentFile {
            discardContent(file, outcome: &outcome, state: &state)
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
        _ items: [RemoteItem], isGone: (ItemID) -> Bool, outcome: inout MergeOutcome, batch: inout StoreBatch,
        state: inout State
    ) {
        for item in items where item.kind == .file && state.byItemID[item.id] == nil {
            let parentIno = item.parentID.map { state.byItemID[$0] } ?? rootIno
            guard let parentIno, let ino = state.child(parentIno, item.name), var node = state.nodes[ino],
                node.kind == .file, node.remoteVersion != nil, !node.metadataDirty,
                (node.remoteContainer ?? node.container) == container, isGone(node.itemID),
                !state.sync.uploadsInFlight.contains(node.itemID), state.conflicts[node.itemID] == nil,
                state.tombstones[item.id] == nil, !state.sync.deletesInFlight.contains(item.id)
            else { continue }
            outcome.note(.info, "\(node.name) was replaced on the remote: the same document, changed (now \(item.id))")
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
        at location: ExternalReference.Location, outcome: inout MergeOutcome, batch: inout StoreBatch,
        state: inout State
    ) {
        guard let reference = state.removeReference(at: location) else { return }
        outcome.note(.notice, "the reference '\(reference.name)' gave way to a remote item of the same name")
        batch.referenceDeletes.append(location)
    }

    /// Takes a content file out of use: removed once the batch that stops referring to it is written.
    private func discardContent(_ file: String, outcome: inout MergeOutcome, state: inout State) {
        state.unsavedFileRemovals.append(file)
        outcome.discardedContent = true
    }

    /// Whether a time the remote reports for folder `ino` may be the echo of a change of ours inside it that
    /// landed but whose outcome is not recorded yet (then ``FolioFileSystem/resendFolderTime(_:state:)``
    /// follows, and sends the local time, which must still be the folder's own): an upload or delete in flight
    /// of an item in it, or of one that left it or was renamed in it.
    static func folderTimeMayBeEcho(_ ino: UInt64, state: borrowing State) -> Bool {
        if state.sync.mayEchoFolderTime(ino) { return true }
        for id in state.sync.uploadsInFlight {
            if let child = state.byItemID[id], state.nodes[child]?.parent == ino { return true }
        }
        return false
    }
}
