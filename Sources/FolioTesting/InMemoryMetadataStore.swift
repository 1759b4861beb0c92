import FolioCore
import Synchronization

/// A metadata store in memory, for unit tests of the core. It can be told to fail, to test error paths.
public final class InMemoryMetadataStore: MetadataStore {
    private let contents = Mutex<StoreSnapshot>(StoreSnapshot())
    private let failure = Mutex<FolioError?>(nil)

    /// An empty store.
    public init() {}

    /// Makes every following `apply` fail with `error` (or succeed again with `nil`).
    public func failApplies(with error: FolioError?) {
        failure.withLock { $0 = error }
    }

    public func load() throws(FolioError) -> StoreSnapshot {
        var snapshot = contents.withLock { $0 }
        snapshot.largestIno = snapshot.nodes.lazy.map(\.ino).max() ?? 0
        return snapshot
    }

    /// The working set (``Node/isWorkingSet``), as `SQLiteMetadataStore` reads it.
    public func loadWorkingSet() throws(FolioError) -> StoreSnapshot {
        var snapshot = try load()
        snapshot.nodes.removeAll { !$0.isWorkingSet }
        snapshot.isWorkingSet = true
        return snapshot
    }

    public func apply(_ batch: StoreBatch, durable: Bool) throws(FolioError) {
        if let error = failure.withLock({ $0 }) { throw error }
        contents.withLock { snapshot in
            var nodes = Dictionary(uniqueKeysWithValues: snapshot.nodes.map { ($0.ino, $0) })
            for node in batch.upserts { nodes[node.ino] = node }
            for ino in batch.deletes { nodes[ino] = nil }
            let removedFolders = Set(batch.deletes)
            nodes = nodes.filter { !removedFolders.contains($0.value.parent) }
            var tombstones = Dictionary(uniqueKeysWithValues: snapshot.tombstones.map { ($0.itemID, $0) })
            for tombstone in batch.tombstoneUpserts { tombstones[tombstone.itemID] = tombstone }
            for id in batch.tombstoneDeletes { tombstones[id] = nil }
            snapshot.nodes = Array(nodes.values)
            snapshot.tombstones = Array(tombstones.values)
            snapshot.values.merge(batch.values) { $1 }
            snapshot.anchors.merge(batch.anchors) { $1 }
            var references = Dictionary(uniqueKeysWithValues: snapshot.references.map { ($0.location, $0) })
            for reference in batch.referenceUpserts { references[reference.location] = reference }
            for location in batch.referenceDeletes { references[location] = nil }
            snapshot.references = Array(references.values)
            let dropped = Set(batch.conflictDeletes)
            snapshot.conflicts.removeAll { dropped.contains($0.itemID) }
            for conflict in batch.conflictUpserts {
                snapshot.conflicts.removeAll {
                    $0.itemID == conflict.itemID && $0.remoteVersion == conflict.remoteVersion
                }
                snapshot.conflicts.append(conflict)
            }
        }
    }
}
