extension FolioFileSystem {
    /// Makes items whose upload `failed` (for a reason that needed the user), and folder creates and metadata
    /// changes the remote refused that way, wait for upload again, and wakes the uploader at once: every such
    /// item, or those at or under `ino`. Called at mount and by `folio retry` (DESIGN.md §2 "Upload"). Returns
    /// how many items there were.
    @discardableResult
    public func retryFailedUploads(under ino: UInt64? = nil) -> Int {
        let count = state.withLock { state in
            var count = 0
            for failed in state.nodes.failed.sorted() {
                if let ino, !state.isAncestor(ino, of: failed) { continue }
                guard var node = state.nodes[failed], case .failed(let reason) = node.state else { continue }
                logger.info("retrying the upload of \(node.name) (it failed: \(reason))")
                do {
                    try node.apply(.retryRequested(generation: node.generation))
                } catch {
                    logger.error("\(node.name) is not retried: \(error)")  // (failed allows it)
                    continue
                }
                saveDeferred(node, state: &state)
                count += 1
            }
            for held in state.sync.uploadsNeedingUser.keys.sorted() {
                if let ino, !state.isAncestor(ino, of: held) { continue }
                let entry = state.sync.releaseHeld(held)
                guard let node = state.nodes[held], entry?.sequence == node.dirtySequence else { continue }
                logger.info("retrying the upload of \(node.name) (the remote refused it: \(entry?.reason ?? ""))")
                count += 1
            }
            return count
        }
        hooks.withLock { $0.uploader }?.retryNow()
        return count
    }

    /// Why the last upload of `ino` failed in a way that clears by itself and what it waits for, while it waits
    /// to be retried (`nil` otherwise).
    public func uploadWait(of ino: UInt64) -> String? {
        state.withLock { state in
            guard let node = state.nodes[ino], node.hasPendingUpload else { return nil }
            return state.sync.uploadWaits[ino]
        }
    }
}
