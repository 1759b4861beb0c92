extension FolioFileSystem {
    /// The key of the remote's identity in the store's values.
    static let remoteIDKey = "remote-id"

    /// The identity of the remote this state was synced with (recorded at mount), or `nil` before the first
    /// mount that recorded one. A remote folder without it is not that remote (DESIGN.md §2 "The remote").
    public var recordedRemoteID: String? {
        state.withLock { $0.values[Self.remoteIDKey] }
    }

    /// Records the identity of the remote this state is synced with (durably).
    public func recordRemoteID(_ remoteID: String) throws(FolioError) {
        try withStateLockForWriteThrough { state throws(FolioError) in
            guard state.values[Self.remoteIDKey] != remoteID else { return }
            var batch = StoreBatch()
            batch.values[Self.remoteIDKey] = remoteID
            try persist(batch, durable: true, state: &state)
            state.values[Self.remoteIDKey] = remoteID
        }
    }
}
