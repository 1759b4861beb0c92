/// Deletes waiting for the provider, by item id, with their upload order kept current by every write through
/// the subscript.
struct TombstoneTable: Sendable {
    private var storage: [ItemID: Tombstone] = [:]
    /// Tombstones in upload order.
    private(set) var queue = UploadQueue<ItemID>()

    subscript(itemID: ItemID) -> Tombstone? {
        get { storage[itemID] }
        set {
            storage[itemID] = newValue
            if let tombstone = newValue {
                queue.enqueue(itemID, sequence: tombstone.sequence)
            } else {
                queue.remove(itemID)
            }
        }
    }

    /// Every tombstone.
    var values: Dictionary<ItemID, Tombstone>.Values { storage.values }

    /// Number of tombstones.
    var count: Int { storage.count }

    /// Takes the oldest queued tombstone out of the upload order (it stays in the table).
    mutating func popOldest() -> Tombstone? {
        while let (itemID, _) = queue.popOldest() {
            if let tombstone = storage[itemID] { return tombstone }
        }
        return nil
    }

    /// Puts a tombstone taken with ``popOldest()`` back into the upload order.
    mutating func requeue(_ tombstone: Tombstone) {
        guard storage[tombstone.itemID] != nil else { return }
        queue.enqueue(tombstone.itemID, sequence: tombstone.sequence)
    }

    /// The sequence of the oldest queued tombstone.
    mutating func oldestSequence() -> UInt64? { queue.oldestSequence() }
}
