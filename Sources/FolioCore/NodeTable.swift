/// The nodes of the namespace by inode, with the upload order of those that wait for the uploader, counts for
/// `folio status`, the bytes of content kept and the pinned nodes, kept current by every write through the
/// subscript (so picking upload work, answering `folio status` and the content keeper's rounds never scan the
/// whole tree).
///
/// Each node is kept in a box of its own: a dictionary keeps its values inline in buckets it leaves up to
/// five eighths empty, which for a node of some 300 bytes costs more than the node (a box costs a pointer).
struct NodeTable: Sendable {
    /// One node, boxed (immutable: a change stores a new box).
    fileprivate final class Box: Sendable {
        let node: Node
        init(_ node: Node) { self.node = node }
    }

    /// Every node of a table, in no particular order.
    struct Values: Sequence {
        fileprivate let boxes: Dictionary<UInt64, Box>.Values

        /// Iterates the nodes.
        struct Iterator: IteratorProtocol {
            fileprivate var boxes: Dictionary<UInt64, Box>.Values.Iterator

            /// The next node.
            mutating func next() -> Node? { boxes.next()?.node }
        }

        /// Iterates the nodes.
        func makeIterator() -> Iterator { Iterator(boxes: boxes.makeIterator()) }

        /// Number of nodes.
        var underestimatedCount: Int { boxes.count }
    }

    private var storage: [UInt64: Box] = [:]
    /// Inodes whose node has something to upload.
    private(set) var pending: Set<UInt64> = []
    /// Pending inodes in upload order (by the sequence of their latest change).
    private var queue = UploadQueue<UInt64>()
    /// How many nodes are in each state (by ``ItemState/name``), container roots aside.
    private(set) var stateCounts: [String: Int] = [:]
    /// Inodes whose upload failed for good.
    private(set) var failed: Set<UInt64> = []
    /// How many folders (container roots included) are listed, and how many are not listed yet.
    private(set) var folderListingCounts: (listed: Int, notListed: Int) = (0, 0)
    /// Bytes of committed content the nodes point to (``Node/cachedContentSize``, summed): the cache limit is
    /// checked against it without a walk of every node.
    private(set) var cachedBytes: Int64 = 0
    /// Inodes of pinned nodes (the content keeper looks at these, not at every node).
    private(set) var pinned: Set<UInt64> = []

    subscript(ino: UInt64) -> Node? {
        get { storage[ino]?.node }
        set {
            let old: Node?
            if let newValue {
                old = storage.updateValue(Box(newValue), forKey: ino)?.node
            } else {
                old = storage.removeValue(forKey: ino)?.node
            }
            count(old, -1)
            count(newValue, 1)
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
    var values: Values { Values(boxes: storage.values) }

    /// Number of nodes.
    var count: Int { storage.count }

    /// Removes and returns a node.
    mutating func removeValue(forKey ino: UInt64) -> Node? {
        pending.remove(ino)
        queue.remove(ino)
        let removed = storage.removeValue(forKey: ino)?.node
        count(removed, -1)
        return removed
    }

    /// Adds `delta` to the counts of `node`'s state.
    private mutating func count(_ node: Node?, _ delta: Int) {
        if let node {
            cachedBytes += Int64(delta) * node.cachedContentSize
            if node.pinned {
                if delta > 0 { pinned.insert(node.ino) } else { pinned.remove(node.ino) }
            }
        }
        if let node, node.kind == .directory {
            if node.childrenListed {
                folderListingCounts.listed += delta
            } else {
                folderListingCounts.notListed += delta
            }
        }
        guard let node, !node.itemID.isContainerRoot else { return }
        stateCounts[node.state.name, default: 0] += delta
        if stateCounts[node.state.name] == 0 { stateCounts[node.state.name] = nil }
        if case .failed = node.state {
            if delta > 0 { failed.insert(node.ino) } else { failed.remove(node.ino) }
        }
    }

    /// Takes the pending node changed longest ago out of the upload order (it stays in the table and pending).
    mutating func popOldestPending() -> Node? {
        while let (ino, _) = queue.popOldest() {
            if let node = storage[ino]?.node, node.hasPendingUpload { return node }
        }
        return nil
    }

    /// Keeps a node out of the upload order while its upload runs (changing the node puts it back).
    mutating func holdBack(_ ino: UInt64) {
        queue.remove(ino)
    }

    /// Puts a pending node taken with ``popOldestPending()`` back into the upload order.
    mutating func requeue(_ ino: UInt64) {
        guard let node = storage[ino]?.node, node.hasPendingUpload else { return }
        queue.enqueue(ino, sequence: node.dirtySequence)
    }

    /// The sequence of the oldest pending node.
    mutating func oldestPendingSequence() -> UInt64? { queue.oldestSequence() }
}
