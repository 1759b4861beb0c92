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
    /// Whether `nodes` is the working set only (``MetadataStore/loadWorkingSet()``): the other stored nodes are
    /// read folder by folder when needed.
    public var isWorkingSet = false
    /// The largest inode number stored (of every node, also those not in `nodes`).
    public var largestIno: UInt64 = 0

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
    /// Inode numbers of nodes to delete; a deleted folder's stored children go with it (those never read into
    /// memory, see ``MetadataStore/loadWorkingSet()``: the others are deleted or moved by the same batch or an
    /// earlier one).
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

    /// Reads what a mount needs before it answers (File Provider's working set as it was left): everything but
    /// the nodes of plain files at rest. Its nodes are every folder and every node ``Node/isWorkingSet`` says
    /// must be known at once; the snapshot says ``StoreSnapshot/isWorkingSet`` and the largest inode stored. The
    /// rest is read with ``loadChildren(of:)``. A store that cannot read part of itself returns ``load()``.
    func loadWorkingSet() throws(FolioError) -> StoreSnapshot
    /// Every stored node whose parent is `folder` (in no particular order).
    func loadChildren(of folder: UInt64) throws(FolioError) -> [Node]
    /// The parent inode of each stored node among those with an id in `items` (the folders to read to know
    /// them); ids nothing stored has are left out.
    func folders(holding items: [ItemID]) throws(FolioError) -> Set<UInt64>
    /// Every version file a stored node refers to (``Node/contentFile``).
    func contentFiles() throws(FolioError) -> Set<String>
}

extension MetadataStore {
    /// A store that reads itself whole: ``load()``.
    public func loadWorkingSet() throws(FolioError) -> StoreSnapshot { try load() }

    /// The children of `folder`, from ``load()``.
    public func loadChildren(of folder: UInt64) throws(FolioError) -> [Node] {
        try load().nodes.filter { $0.parent == folder }
    }

    /// The folders of `items`, from ``load()``.
    public func folders(holding items: [ItemID]) throws(FolioError) -> Set<UInt64> {
        let wanted = Set(items)
        return Set(try load().nodes.filter { wanted.contains($0.itemID) }.map(\.parent))
    }

    /// The version files of every stored node, from ``load()``.
    public func contentFiles() throws(FolioError) -> Set<String> {
        Set(try load().nodes.compactMap(\.contentFile))
    }
}
