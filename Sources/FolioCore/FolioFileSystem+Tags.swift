/// Tags that travel (issue 16): an item's tags (`user.xdg.tags`) are kept by the provider with its metadata.
///
/// Locally they stay in the node's `user.xdg.tags` attribute (what `getfattr`, `.Tags/` and KDE read), beside the
/// tags the remote had as this device last knew them (``Node/remoteTags``). A change here (`setfattr`, `folio
/// tag`) makes them differ, which is a pending upload of metadata only (``Node/tagsPending``): sent as a
/// ``TagUpdate`` that the provider merges atomically into what it holds, so a concurrent change on another
/// device is never overwritten. A remote change of them is merged with a change here not sent yet
/// (``Node/mergeRemoteTags(_:)``): tags never conflict, and never touch content.
extension FolioFileSystem {
    /// The tags of an item.
    public func tags(of ino: UInt64) throws(FolioError) -> [String] {
        try state.withLock { state throws(FolioError) in
            guard let node = state.node(ino) else { throw .notFound("inode \(ino)") }
            return node.tags
        }
    }

    /// Adds `added` and removes `removed` from an item's tags (each checked with ``TagUpdate/problem(with:)``
    /// first: a bad one changes nothing), and returns the tags it has then. Uploaded like `setfattr` of
    /// `user.xdg.tags`.
    @discardableResult
    public func changeTags(_ ino: UInt64, adding added: [String], removing removed: [String]) throws(FolioError)
        -> [String]
    {
        for tag in added + removed {
            if let problem = TagUpdate.problem(with: tag) { throw .invalidArgument("\(problem): \"\(tag)\"") }
        }
        try refuseVirtual(ino)
        let tags = try state.withLock { state throws(FolioError) -> [String] in
            guard var node = state.node(ino) else { throw .notFound("inode \(ino)") }
            let before = node.tags
            let after = TagUpdate.unique(before.filter { !removed.contains($0) } + added)
            guard after != before else { return before }
            node.tags = after
            node.changeTime = .now()
            noteTagsChanged(&node, state: &state)
            saveDeferred(node, state: &state)
            return after
        }
        announce([.inode(ino)])
        notifyUploader()
        return tags
    }

    /// Puts a node whose tags changed here into the upload order (its update is sent after what waits before it).
    func noteTagsChanged(_ node: inout Node, state: inout State) {
        guard node.tagsPending, !node.hasPendingUploadBesidesTags else { return }
        node.dirtySequence = state.allocateSequence()
    }

    /// An update of the tags of `itemID` landed at the provider, which answered with `answer`.
    func tagUpdateLanded(ino: UInt64, itemID: ItemID, sent: TagUpdate, answer: [String]?, state: inout State) {
        let current = state.nodes[ino]?.itemID == itemID ? ino : state.byItemID[itemID]
        guard let current, var node = state.nodes[current], node.itemID == itemID else { return }
        node.tagUpdateLanded(sent, answer: answer)
        saveDeferred(node, state: &state)
    }
}
