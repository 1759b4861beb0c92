/// Everything the store keeps, as loaded at start.
public struct StoreSnapshot: Sendable {
    /// All nodes.
    public var nodes: [Node]
    /// Deletes waiting for upload.
    public var tombstones: [Tombstone]
    /// Small named values (sync anchors, counters).
    public var values: [String: String]
    /// External references.
    public var references: [ExternalReference]
    /// Conflict versions.
    public var conflicts: [ConflictVersion] = []
    /// The sync anchor of each container: where its changes are asked from next.
    public var anchors: [ContainerID: SyncAnchor] = [:]

    /// Creates a snapshot.
    public init(
        nodes: [Node] = [], tombstones: [Tombstone] = [], values: [String: String] = [:],
        references: [ExternalReference] = []
    ) {
        self.nodes = nodes
        self.tombstones = tombstones
        self.values = values
        self.references = references
    }
}

/// A set of changes written in one transaction.
public struct StoreBatch: Sendable {
    /// Nodes to insert or replace.
    public var upserts: [Node] = []
    /// Inode numbers of nodes to delete.
    public var deletes: [UInt64] = []
    /// Tombstones to insert or replace.
    public var tombstoneUpserts: [Tombstone] = []
    /// Item ids of tombstones to drop.
    public var tombstoneDeletes: [ItemID] = []
    /// Named values to set.
    public var values: [String: String] = [:]
    /// External references to insert or replace.
    public var referenceUpserts: [ExternalReference] = []
    /// Locations of external references to drop.
    public var referenceDeletes: [ExternalReference.Location] = []
    /// Conflict versions to insert or replace (by item and remote version).
    public var conflictUpserts: [ConflictVersion] = []
    /// Items whose conflict versions are all dropped.
    public var conflictDeletes: [ItemID] = []
    /// Sync anchors to set, by container (written with the merge they belong to).
    public var anchors: [ContainerID: SyncAnchor] = [:]

    /// An empty batch.
    public init() {}

    /// Whether the batch changes nothing.
    public var isEmpty: Bool {
        upserts.isEmpty && deletes.isEmpty && tombstoneUpserts.isEmpty && tombstoneDeletes.isEmpty && values.isEmpty
            && referenceUpserts.isEmpty && referenceDeletes.isEmpty
            && conflictUpserts.isEmpty && conflictDeletes.isEmpty && anchors.isEmpty
    }
}

/// Persistent metadata: nodes, tombstones, named values and external references. Implementations must make a batch
/// atomic, and
/// durable on disk before returning when `durable` is true (a commit) — at least crash-safe otherwise.
public protocol MetadataStore: Sendable {
    /// Reads everything.
    func load() throws(FolioError) -> StoreSnapshot
    /// Applies a batch in one transaction.
    func apply(_ batch: StoreBatch, durable: Bool) throws(FolioError)
}
