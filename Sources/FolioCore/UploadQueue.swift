import HeapModule

/// The order in which pending uploads are picked: keys by the sequence of their latest change, oldest first.
///
/// A min-heap with lazy removal: re-queueing a key with a newer sequence, or removing it, leaves the old heap
/// entry in place, and entries that no longer match the key's queued sequence are dropped when they reach the
/// top. Queueing and taking the oldest are O(log n), so picking upload work never scans the whole tree.
struct UploadQueue<Key: Hashable & Sendable>: Sendable {
    private struct Entry: Comparable, Sendable {
        var sequence: UInt64
        var key: Key

        static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.sequence < rhs.sequence }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.sequence == rhs.sequence && lhs.key == rhs.key }
    }

    private var heap = Heap<Entry>()
    private var queued: [Key: UInt64] = [:]

    /// Number of queued keys.
    var count: Int { queued.count }

    /// Queues `key` at `sequence`, replacing an earlier position of it.
    mutating func enqueue(_ key: Key, sequence: UInt64) {
        guard queued[key] != sequence else { return }
        queued[key] = sequence
        heap.insert(Entry(sequence: sequence, key: key))
        compactIfSparse()
    }

    /// Takes `key` out of the queue.
    mutating func remove(_ key: Key) {
        queued[key] = nil
    }

    /// The sequence of the oldest queued key, without taking it.
    mutating func oldestSequence() -> UInt64? {
        dropStaleTop()
        return heap.min?.sequence
    }

    /// Takes the oldest queued key.
    mutating func popOldest() -> (key: Key, sequence: UInt64)? {
        dropStaleTop()
        guard let entry = heap.popMin() else { return nil }
        queued[entry.key] = nil
        return (entry.key, entry.sequence)
    }

    private mutating func dropStaleTop() {
        while let top = heap.min, queued[top.key] != top.sequence {
            heap.removeMin()
        }
    }

    /// Rebuilds the heap when stale entries outnumber live ones, so memory stays proportional to the queue.
    private mutating func compactIfSparse() {
        guard heap.count > 1024, heap.count > 4 * queued.count else { return }
        heap = Heap(queued.map { Entry(sequence: $0.value, key: $0.key) })
    }
}
