/// The nodes of the namespace by inode, with an index of those that wait for the uploader, kept current by
/// every write through the subscript (so picking upload work never scans the whole tree).
struct NodeTable: Sendable {
    private var storage: [UInt64: Node] = [:]
    /// Inodes whose node has something to upload.
    private(set) var pending: Set<UInt64> = []

    subscript(ino: UInt64) -> Node? {
        get { storage[ino] }
        set {
            storage[ino] = newValue
            if let node = newValue, node.hasPendingUpload {
                pending.insert(ino)
            } else {
                pending.remove(ino)
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
        return storage.removeValue(forKey: ino)
    }
}
