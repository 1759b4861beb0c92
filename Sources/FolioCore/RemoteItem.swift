/// An item as the provider describes it: metadata only, never content.
public struct RemoteItem: Hashable, Sendable, Codable {
    /// The item's stable id.
    public var id: ItemID
    /// The container the item lives in.
    public var container: ContainerID
    /// The parent folder's id, or `nil` for an item directly in the container's root.
    public var parentID: ItemID?
    /// The item's name in its parent.
    public var name: String
    /// What kind of item this is (never `fifo` or `socket`: those are local only).
    public var kind: ItemKind
    /// Content size in bytes (0 for folders and symlinks).
    public var size: Int64
    /// Last content modification time.
    public var modificationTime: Timestamp
    /// Permission bits (`0o7777` mask).
    public var mode: UInt32
    /// The target of a symlink.
    public var symlinkTarget: String?
    /// The provider's version of the item's content; changes with every content change.
    public var version: String
    /// Set only on the answer to a change without content (``Provider/modifyItem(_:in:baseVersion:changes:contents:)``)
    /// of a file that was no longer at the base version the caller sent: another writer changed its content
    /// meanwhile, so ``version`` names content the caller has not seen. The caller keeps its base version, and
    /// the next enumeration brings the other writer's version as a remote change. `false` elsewhere; never
    /// encoded (it belongs to one answer, not to the item).
    public var changedElsewhere: Bool = false
    /// Whether ``mode`` and ``modificationTime`` are the item's own, as set through Folio. `false` where the
    /// provider holds none of that metadata for the item (a WebDAV server that keeps no properties): the mode is
    /// then a default and the time the server's own, so a known item keeps the mode and time it has on this device
    /// (its time is the remote's only when its content changes there). Never encoded.
    public var metadataKept: Bool = true
    /// The item's tags as the provider keeps them with its metadata (``TagUpdate``); `nil` where the provider (or
    /// this item there) keeps none, so a device keeps the tags it has. A change of tags is not a change of
    /// ``version``.
    public var tags: [String]?

    // (Written out so that ``changedElsewhere`` and ``metadataKept`` are not encoded.)
    private enum CodingKeys: String, CodingKey {
        case id, container, parentID, name, kind, size, modificationTime, mode, symlinkTarget, version, tags
    }

    /// Creates a remote item description.
    public init(
        id: ItemID, container: ContainerID, parentID: ItemID?, name: String, kind: ItemKind, size: Int64,
        modificationTime: Timestamp, mode: UInt32, symlinkTarget: String? = nil, version: String,
        tags: [String]? = nil
    ) {
        self.tags = tags
        self.id = id
        self.container = container
        self.parentID = parentID
        self.name = name
        self.kind = kind
        self.size = size
        self.modificationTime = modificationTime
        self.mode = mode
        self.symlinkTarget = symlinkTarget
        self.version = version
    }
}

/// What a provider needs to create an item.
public struct RemoteItemTemplate: Hashable, Sendable {
    /// The id chosen on this machine; a provider that already has an item with this id at this place returns
    /// it instead of creating a second one (so a retried create is never duplicated).
    public var id: ItemID
    /// The container to create the item in.
    public var container: ContainerID
    /// The parent folder, or `nil` for the container's root.
    public var parentID: ItemID?
    /// The item's name.
    public var name: String
    /// Kind: file, directory or symlink.
    public var kind: ItemKind
    /// Modification time to record.
    public var modificationTime: Timestamp
    /// Permission bits.
    public var mode: UInt32
    /// Target of a symlink.
    public var symlinkTarget: String?
    /// Names the writer of the content (see ``RemoteItemChanges/retryTag``): a retried create whose first
    /// attempt landed, with other content than this one, replaces that content only if it is still exactly
    /// what the first attempt wrote.
    public var retryTag: String?

    /// Creates a template.
    public init(
        id: ItemID, container: ContainerID, parentID: ItemID?, name: String, kind: ItemKind,
        modificationTime: Timestamp, mode: UInt32, symlinkTarget: String? = nil, retryTag: String? = nil
    ) {
        self.id = id
        self.container = container
        self.parentID = parentID
        self.name = name
        self.kind = kind
        self.modificationTime = modificationTime
        self.mode = mode
        self.symlinkTarget = symlinkTarget
        self.retryTag = retryTag
    }
}

/// Metadata changes sent with a modify; `nil` fields are left as they are.
public struct RemoteItemChanges: Hashable, Sendable {
    /// New container (a move across containers), if any.
    public var container: ContainerID?
    /// New parent; `.some(nil)` moves the item to its container's root.
    public var parentID: ItemID??
    /// New name.
    public var name: String?
    /// New permission bits.
    public var mode: UInt32?
    /// New modification time.
    public var modificationTime: Timestamp?
    /// Names who sends new content and from which version (`<writer>@<base version>`); not a change itself.
    /// The provider keeps it with the version it writes (content, or a new modification time). A later
    /// content change with the same tag is accepted although the remote is no longer at its base version, as
    /// long as the remote is still exactly at the version that tag wrote: that version is this writer's own
    /// earlier attempt, whose answer was lost (a daemon killed while it waited), not someone else's change.
    public var retryTag: String?
    /// An update of the item's tags, merged by the provider into the tags it holds (``TagUpdate/merged(into:)``);
    /// metadata only: it changes no content and no ``RemoteItem/version``. A provider that keeps no tags ignores it
    /// (its answer's ``RemoteItem/tags`` is `nil`).
    public var tags: TagUpdate?

    /// Creates a change set.
    public init(
        container: ContainerID? = nil, parentID: ItemID?? = nil, name: String? = nil, mode: UInt32? = nil,
        modificationTime: Timestamp? = nil, retryTag: String? = nil, tags: TagUpdate? = nil
    ) {
        self.tags = tags
        self.container = container
        self.parentID = parentID
        self.name = name
        self.mode = mode
        self.modificationTime = modificationTime
        self.retryTag = retryTag
    }

    /// Whether nothing changes (the retry tag is not a change).
    public var isEmpty: Bool {
        container == nil && parentID == nil && name == nil && mode == nil && modificationTime == nil && tags == nil
    }
}

/// An opaque position in a container's change history.
public struct SyncAnchor: Hashable, Sendable, Codable {
    /// The provider's encoding of the position.
    public var rawValue: String
    /// Wraps a provider's anchor.
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// Changes in a container since an anchor.
public struct RemoteChanges: Sendable {
    /// Items created or changed (metadata or content).
    public var updated: [RemoteItem]
    /// Ids of deleted items.
    public var deleted: [ItemID]
    /// The anchor to ask from next time.
    public var anchor: SyncAnchor
    /// When true, `updated` is the container's whole content and anything not listed was deleted.
    public var isFullEnumeration: Bool
    /// More changes wait: call ``Provider/changes(in:since:)`` again at once from ``anchor``.
    public var moreComing: Bool

    /// Creates a change set.
    public init(
        updated: [RemoteItem], deleted: [ItemID], anchor: SyncAnchor, isFullEnumeration: Bool = false,
        moreComing: Bool = false
    ) {
        self.updated = updated
        self.deleted = deleted
        self.anchor = anchor
        self.isFullEnumeration = isFullEnumeration
        self.moreComing = moreComing
    }
}
