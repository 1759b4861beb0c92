extension FolioFileSystem {
    /// A change of ours to a child landed in folder `ino` on the remote, which gave the folder a time of its
    /// own (the remote's clock): the folder's local time — the one the user set, or that of the last change
    /// inside it here — is sent again after it, so the remote's echo never replaces it, here or elsewhere. (A
    /// remote time of the folder seen before this is recorded is not taken: ``folderTimeMayBeEcho(_:state:)``.)
    func resendFolderTime(_ ino: UInt64, state: inout State) {
        guard var folder = state.nodes[ino], folder.kind == .directory, !folder.itemID.isContainerRoot,
              folder.remoteVersion != nil, !folder.kind.isLocalOnly else { return }
        // A metadata change already waiting goes after this one anyway; one in flight must go once more.
        if folder.metadataDirty && !state.uploadsInFlight.contains(folder.itemID) { return }
        logger.debug("the time of folder \(folder.name) (inode \(ino)) is sent again after a change inside it")
        folder.metadataDirty = true
        folder.dirtySequence = state.allocateSequence()
        state.metadataEpochs[ino, default: 0] += 1
        saveDeferred(folder, state: &state)
    }

    /// Whether a time the remote reports for folder `ino` may be the echo of a change of ours inside it that
    /// landed but whose outcome is not recorded yet (then ``resendFolderTime(_:state:)`` follows, and sends the
    /// local time, which must still be the folder's own): an upload or delete in flight of an item in it, or
    /// of one that left it or was renamed in it.
    func folderTimeMayBeEcho(_ ino: UInt64, state: borrowing State) -> Bool {
        for id in state.deletesInFlight where state.foldersChanged[id]?.contains(ino) ?? false { return true }
        for id in state.uploadsInFlight {
            if state.foldersChanged[id]?.contains(ino) ?? false { return true }
            if let child = state.byItemID[id], state.nodes[child]?.parent == ino { return true }
        }
        return false
    }

    /// An upload or delete of `itemID` landed: the times of the folders it changed are sent again.
    func resendFolderTimes(changedBy itemID: ItemID, state: inout State) {
        for folder in state.foldersChanged.removeValue(forKey: itemID) ?? [] {
            resendFolderTime(folder, state: &state)
        }
    }
}
