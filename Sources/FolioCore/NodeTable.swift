/// The nodes of the namespace by inode, with the upload order of those that wait for the uploader, kept current
/// by every write through the subscript (so picking upload work never scans the whole tree).
struct NodeTable: Sendable {
    private var storage: [UInt64: Node] = [:]
    /// Inodes whose node has something to upload.
    private(set) var pending: Set<UInt64> = []
    /// Pending inodes in upload order (by the sequence of their latest change).
    private var queue = UploadQueue<UInt64>()

    subscript(ino: UInt64) -> Node? {
        get { storage[ino] }
        set {
            storage[ino] = newValue
            if let node = newValue, node.hasPendingUpload {
                pending.insert(ino)
                queue.enqueue(ino, sequence: node.dirtySequence)
            } else {
                pending.remove(ino)
                queue.remove(ino)
            }
        }
    }

    /// Every node.
    var values: Dictionary<UInt64, Node>.Values { storage.values }

    /// Number of nodes.
    var count: Int { storage.count }

    /// Removes and returns a node.
    mutating func removeValue(forKey ino: UInt64) -> Node? {
        pending.remove(ino)
        queue.remove(ino)
        return storage.removeValue(forKey: ino)
    }

    /// Takes the pending node changed longest ago out of the upload order (it stays in the table and pending).
    mutating func popOldestPending() -> Node? {
        while let (ino, _) = queue.popOldest() {
            if let node = storage[ino], node.hasPendingUpload { return node }
        }
        return nil
    }

    /// Puts a pending node taken with ``popOldestPending()`` back into the upload order.
    mutating func requeue(_ ino: UInt64) {
        guard let node = storage[ino], node.hasPendingUpload else { return }
        queue.enqueue(ino, sequence: node.dirtySequence)
    }

    /// The sequence of the oldest pending node.
    mutating func oldestPendingSequence() -> UInt64? { queue.oldestSequence() }
}
