/// A commit whose store transaction is queued in the ``StoreWriter`` (made in memory, not yet in the store): what
/// undoes it if that transaction cannot be written, so a commit that cannot be stored fails and leaves the tree
/// as it was, as one that fails under the state lock does (see ``FolioFileSystem/undoCommit(_:state:)``).
struct QueuedCommit: Sendable {
    /// The committed item.
    let ino: UInt64
    /// The node as it was before the commit.
    let before: Node
    /// The node as the commit made it.
    let after: Node
    /// The write session that was committed, and whether its file was a committed version before.
    let sessionID: UInt64
    let sessionFileWasCommitted: Bool
    /// The version files the commit replaced: deleted once its transaction is written, kept if it is undone.
    let replaced: [String]
}
