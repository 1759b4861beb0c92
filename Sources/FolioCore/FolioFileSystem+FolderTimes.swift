extension FolioFileSystem {
    /// A change of ours to a child landed in folder `ino` on the remote, which gave the folder a time of its
    /// own (the remote's clock): the folder's local time — the one the user set, or that of the last change
    /// inside it here — is sent again after it, so the remote's echo never replaces it, here or elsewhere. (A
    /// remote time of the folder seen before this is recorded is not taken:
    /// ``RemoteMerge/folderTimeMayBeEcho(_:state:)``.) Only the time is sent (``Node/timeDirty``): the folder's
    /// name, place and mode meanwhile are the remote's, so another device's rename, move or mode change of the
    /// folder is never undone by it.
    func resendFolderTime(_ ino: UInt64, state: inout State) {
        guard var folder = state.nodes[ino], folder.kind == .directory, !folder.itemID.isContainerRoot,
              folder.remoteVersion != nil, !folder.kind.isLocalOnly else { return }
        // A change of the folder already waiting sends its time anyway; one in flight must go once more.
        let inFlight = state.sync.uploadsInFlight.contains(folder.itemID)
        if (folder.metadataDirty || folder.timeDirty) && !inFlight { return }
        _ = state.sync.folderTimeResent(folder.itemID)
        logger.debug("the time of folder \(folder.name) (inode \(ino)) is sent again after a change inside it")
        folder.timeDirty = true
        folder.dirtySequence = state.allocateSequence()
        saveDeferred(folder, state: &state)
    }

    /// Whether folder `ino`, deleted on the remote while only its time waited to be sent, holds changes here
    /// that are kept: then it is created again for them; otherwise the remote's delete is taken.
    func folderKeepsLocalChanges(_ ino: UInt64, state: borrowing State) -> Bool {
        var folders = [ino]
        while let folder = folders.popLast() {
            for child in (state.children[folder] ?? [:]).values {
                guard let node = state.nodes[child] else { continue }
                if node.hasPendingUpload && !node.waitsOnlyForTime { return true }
                if case .conflicted = node.state { return true }
                if node.kind == .directory { folders.append(child) }
            }
        }
        return false
    }

    /// Performs what a change of the sync book asks for (``SyncBook/Action``), under the core's lock.
    func perform(_ actions: [SyncBook.Action], state: inout State) {
        for action in actions {
            switch action {
            case .refreshSoon: refresher?.refreshSoon()
            case .fetchConflicts: keeper?.contentChanged()
            case .resendFolderTime(let folder): resendFolderTime(folder, state: &state)
            }
        }
    }
}
