/// The merge of one remote item into the known node of the same id (DESIGN.md §2 "Remote changes"), as a pure
/// function of the node, the item, the sync bookkeeping and what the tree says around it: what the node becomes,
/// and what has to follow (a conflict to fetch, an item to take again, content to drop, entries to invalidate and
/// changes to replay). It does no I/O and changes no state: the caller applies it under the core's lock.
struct KnownItemMerge: Equatable {
    /// What the merge decided.
    enum Outcome: Equatable {
        /// The node keeps what it has (a pending local change, nothing differs, or its state could not take the
        /// change: ``error``).
        case unchanged
        /// The item is taken again after this merge (the name it moves to is still taken), never lost with the
        /// anchor moving on.
        case takeAgain
        /// An editor's save may still take the item over: the remote change waits until the save is decided.
        case waitForSave
        /// Changed on the remote and here: a conflict whose remote version the sync engine fetches.
        case conflict
        /// The node took the remote's state.
        case updated
    }

    /// What the tree says around the node, as the caller found it.
    struct Surroundings: Equatable {
        /// Whether an editor's save holds the item (``SaveTracker/isHeld(_:now:)``).
        var heldBySave = false
        /// Whether the name the item has on the remote is taken in its remote folder (by anything, the node
        /// itself included: only asked when the node moves).
        var nameTaken = false
        /// Whether the folder's remote time may be the echo of a change of ours that landed unrecorded (needed
        /// only of folders whose own time does not wait to be sent).
        var folderTimeMayBeEcho = false
    }

    /// What the merge decided.
    var outcome: Outcome
    /// The node as merged (the caller writes it if it differs from the node it gave).
    var node: Node
    /// Where the node was, if the remote moved or renamed it (its entry there is invalidated and its move
    /// replayed).
    var origin: ExternalReference.Location?
    /// Whether the content was replaced by the remote's (a placeholder now): the inode is invalidated.
    var contentReplaced = false
    /// Whether the mode or a file's time changed (replayed as a change for watchers).
    var attributesChanged = false
    /// The content file the node no longer uses (the caller drops it unless it is open).
    var droppedContent: String?
    /// A state transition the item's state did not allow (the caller logs it; the outcome says what follows).
    var error: FolioError?

    /// Merges `item`, whose remote folder is `parent` (a listed folder), into `node` (the same item id), in a merge
    /// of `scope` of `container`, with the sync bookkeeping `book`.
    ///
    /// The item's tags are merged whatever else the merge decides (a pending change of them never holds back the
    /// rest, and is never a conflict): the remote's are taken, merged with a change made here and not sent yet
    /// (``Node/mergeRemoteTags(_:)``); only a merge that waits (``Outcome/takeAgain``, ``Outcome/waitForSave``)
    /// leaves them for the next one.
    static func merge(
        _ item: RemoteItem, into node: Node, parent: UInt64, container: ContainerID, scope: MergeScope,
        book: SyncBook, surroundings: Surroundings
    ) -> KnownItemMerge {
        var result = mergeBesidesTags(
            item, into: node, parent: parent, container: container, scope: scope, book: book,
            surroundings: surroundings)
        switch result.outcome {
        case .takeAgain, .waitForSave: return result
        case .unchanged, .updated, .conflict: break
        }
        if result.node.mergeRemoteTags(item.tags) { result.attributesChanged = true }
        return result
    }

    /// ``merge(_:into:parent:container:scope:book:surroundings:)`` of everything but the tags.
    private static func mergeBesidesTags(
        _ item: RemoteItem, into node: Node, parent: UInt64, container: ContainerID, scope: MergeScope,
        book: SyncBook, surroundings: Surroundings
    ) -> KnownItemMerge {
        var node = node
        if scope == .container, node.kind == .directory, !node.childrenListed {
            node.childrenListed = true  // a full enumeration of the container names all its children
        }
        var result = KnownItemMerge(outcome: .unchanged, node: node)
        let remoteChanged = item.version != node.remoteVersion
        if remoteChanged, surroundings.heldBySave {
            result.outcome = .waitForSave
            return result
        }
        let inFlight = book.uploadsInFlight.contains(node.itemID)
        if node.kind == .file, node.remoteVersion != nil, remoteChanged, !inFlight,
           !book.uncertainUploads.contains(node.itemID), node.state.hasPendingLocalVersion {
            // Changed on the remote and here: a conflict; the sync engine keeps both versions.
            if node.state != .conflicted {
                do throws(FolioError) {
                    try node.apply(.conflictDetected)
                } catch {
                    result.error = error
                    return result
                }
            }
            result.node = node
            result.outcome = .conflict
            return result
        }
        // Our own metadata change may have landed unseen (its answer lost, or the daemon killed before its
        // outcome was stored): then the remote has exactly our time and size.
        let maybeOurs = book.uncertainUploads.contains(node.itemID) && item.size == node.size
            && item.modificationTime == node.modificationTime
        if node.kind == .file, node.metadataDirty, !node.state.hasPendingLocalVersion, node.remoteVersion != nil,
           remoteChanged, node.state != .conflicted, !inFlight, !maybeOurs {
            // New content on the remote while only a metadata change of ours waits (a metadata change never
            // conflicts): the content is taken; the local name, mode and time stay, to be sent.
            return result.replacingContent(with: item)
        }
        // (A folder whose only change waiting is its time takes the rest: only the time is sent.)
        guard !node.hasPendingUploadBesidesTags || node.waitsOnlyForTime, node.state != .conflicted else {
            return result
        }
        let contentChanged = remoteChanged && node.kind == .file
        let moved = node.parent != parent || node.name != item.name
        if moved, surroundings.nameTaken {
            result.outcome = .takeAgain  // after what holds the name now goes, or moves
            return result
        }
        if contentChanged {
            result = result.replacingContent(with: item)
            guard result.outcome == .updated else { return result }
            node = result.node
        }
        // Where the remote holds no mode or time of the item, the ones here stay (a time comes with new content).
        let mode = item.metadataKept ? item.mode : node.mode
        let time = item.metadataKept || contentChanged ? item.modificationTime : node.modificationTime
        // (A folder's time follows its children: their own replays say enough.)
        result.attributesChanged = node.mode != mode
            || (node.kind != .directory && node.modificationTime != time)
        if moved {
            result.origin = ExternalReference.Location(parent: node.parent, name: node.name)
            node.parent = parent
            node.name = item.name
        }
        node.mode = mode
        if node.kind != .directory || (!node.timeDirty && !surroundings.folderTimeMayBeEcho) {
            node.modificationTime = time
        }
        node.symlinkTarget = item.symlinkTarget
        node.remoteVersion = item.version
        node.container = container
        node.remoteContainer = container
        result.node = node
        result.outcome = .updated
        return result
    }

    /// This merge with the node's content replaced by the remote's new version (a placeholder of it), or, if the
    /// node's state does not allow that, the node kept as it is and the error recorded.
    private func replacingContent(with item: RemoteItem) -> KnownItemMerge {
        var result = self
        var node = self.node
        do throws(FolioError) {
            try node.apply(.remoteContentChanged)
        } catch {
            result.error = error
            return result
        }
        result.droppedContent = node.contentFile
        node.contentFile = nil
        node.size = item.size
        node.remoteVersion = item.version
        result.node = node
        result.outcome = .updated
        result.contentReplaced = true
        return result
    }
}
