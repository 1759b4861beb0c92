/// The local record of one item in the namespace: what `stat` shows, where its content is, and what still
/// has to reach the provider. Persisted by the ``MetadataStore``; keyed by its inode number.
public struct Node: Hashable, Sendable, Codable {
    // (Declared in this order to leave no padding: Swift lays a struct out as declared, and every node is kept.)
    /// The inode number, stable for the life of the node. 1 is the full view's root.
    public var ino: UInt64
    /// The item's id, shared with the provider.
    public var itemID: ItemID
    /// The container the item belongs to.
    public var container: ContainerID
    /// The parent's inode number; 0 for a node outside the full view (a private container's root).
    public var parent: UInt64
    /// The name in the parent.
    public var name: String
    /// Content size in bytes of the current committed version.
    public var size: Int64
    /// Last content modification.
    public var modificationTime: Timestamp
    /// Last status change.
    public var changeTime: Timestamp
    /// Last access (kept as given by `utimens`; not updated by reads).
    public var accessTime: Timestamp
    /// Permission bits (`0o7777`).
    public var mode: UInt32
    /// Owner.
    public var uid: UInt32
    /// Group.
    public var gid: UInt32
    /// Symlink target.
    public var symlinkTarget: String?
    /// The device number (`st_rdev`) of a device node; 0 for every other kind.
    public var device: UInt64
    /// File name of the current committed version in the content cache; `nil` when not materialized.
    public var contentFile: String?
    /// Local content generation, incremented by every commit.
    public var generation: UInt64
    /// The provider's version this node is based on; `nil` if the item was never uploaded.
    public var remoteVersion: String?
    /// Other extended attributes (`user.*`), kept with the item.
    public var xattrs: [String: [UInt8]]
    /// Ordering key of pending uploads: lower goes first.
    public var dirtySequence: UInt64
    /// The container the provider holds the item in (differs from ``container`` while a move across
    /// containers waits for upload); `nil` if the provider has never seen it.
    public var remoteContainer: ContainerID?
    /// The content lifecycle state: changed only by ``apply(_:)`` once the node exists.
    public private(set) var state: ItemState
    /// What kind of item this is.
    public var kind: ItemKind
    /// A rename, move, mode or time change waits for upload.
    public var metadataDirty: Bool
    /// Only the modification time waits for upload: a folder's own time, sent again after a change of ours
    /// inside it landed (the remote gave the folder a time of its own). Its name, place and mode stay the
    /// remote's, taken from it meanwhile; only the time is sent.
    public var timeDirty: Bool
    /// Kept materialized.
    public var pinned: Bool
    /// A folder's children were listed from the provider (File Provider's working set): its children in the
    /// tree are the remote's, kept current by changes since the container's anchor. A folder not listed yet is
    /// listed when it is first looked up in or listed; a folder made here is listed by definition. Meaningless
    /// for other kinds.
    public var childrenListed: Bool

    /// Creates a node.
    public init(
        ino: UInt64, itemID: ItemID, container: ContainerID, parent: UInt64, name: String, kind: ItemKind,
        size: Int64 = 0, modificationTime: Timestamp, changeTime: Timestamp? = nil, accessTime: Timestamp? = nil,
        mode: UInt32, uid: UInt32 = 0, gid: UInt32 = 0, symlinkTarget: String? = nil, device: UInt64 = 0,
        state: ItemState, contentFile: String? = nil, generation: UInt64 = 0, remoteVersion: String? = nil,
        metadataDirty: Bool = false, timeDirty: Bool = false, pinned: Bool = false, xattrs: [String: [UInt8]] = [:],
        dirtySequence: UInt64 = 0, remoteContainer: ContainerID? = nil, childrenListed: Bool = true
    ) {
        self.childrenListed = childrenListed
        self.remoteContainer = remoteContainer
        self.ino = ino
        self.itemID = itemID
        self.container = container
        self.parent = parent
        self.name = name
        self.kind = kind
        self.size = size
        self.modificationTime = modificationTime
        self.changeTime = changeTime ?? modificationTime
        self.accessTime = accessTime ?? modificationTime
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.symlinkTarget = symlinkTarget
        self.device = device
        self.state = state
        self.contentFile = contentFile
        self.generation = generation
        self.remoteVersion = remoteVersion
        self.metadataDirty = metadataDirty
        self.timeDirty = timeDirty
        self.pinned = pinned
        self.xattrs = xattrs
        self.dirtySequence = dirtySequence
    }

    /// Moves the state by `event` (``ItemState/applying(_:)``, the only writer of ``state``); an event the state
    /// does not allow leaves it as it is and throws.
    public mutating func apply(_ event: ItemState.Event) throws(FolioError) {
        state = try state.applying(event)
    }

    /// The provider deleted the item while it had local changes: the local version is kept and uploaded as a
    /// new create (a new generation), as the next change in upload order (`sequence`).
    mutating func prepareToBeCreatedAgain(sequence: UInt64) throws(FolioError) {
        try apply(.committed(generation: generation + 1))
        remoteVersion = nil
        remoteContainer = nil
        generation += 1
        dirtySequence = sequence
    }

    /// Bytes of content this node keeps in the content cache (none for the shared empty version).
    var cachedContentSize: Int64 {
        contentFile == nil || contentFile == ContentCache.emptyVersion ? 0 : size
    }

    /// Whether the node is in the working set a mount reads before it answers
    /// (``MetadataStore/loadWorkingSet()``): a folder, or a node with something in progress or waiting (a state
    /// other than a placeholder or a download at rest, a metadata change, a pin, or no remote version yet). The
    /// other nodes are plain files at rest, read with their folder when it is first needed. `SQLiteMetadataStore`
    /// keeps an index of the same condition (`StoreSchema.workingSetCondition`): change both together.
    public var isWorkingSet: Bool {
        if kind == .directory || metadataDirty || timeDirty || pinned || remoteVersion == nil { return true }
        switch state {
        case .placeholder, .materialized: return false
        default: return true
        }
    }

    /// Whether this is a folder whose children have to be listed from the provider before they are known.
    public var needsListing: Bool { kind == .directory && !childrenListed && !kind.isLocalOnly }

    /// Whether the provider has never seen this item.
    public var needsCreate: Bool { remoteVersion == nil && !kind.isLocalOnly && !itemID.isContainerRoot }

    /// Whether the only thing about this node that waits for the uploader is its time (``timeDirty``): the
    /// remote's name, place, mode and deletion of it are taken meanwhile.
    public var waitsOnlyForTime: Bool {
        guard timeDirty, !metadataDirty, !tagsPending, !needsCreate, !kind.isLocalOnly, !itemID.isContainerRoot else {
            return false
        }
        if case .dirty = state { return false }
        if case .uploading = state { return false }
        return true
    }

    /// Whether anything about this node waits for the uploader.
    public var hasPendingUpload: Bool { hasPendingUploadBesidesTags || tagsPending }

    /// Whether anything but an update of its tags (``tagsPending``, metadata that merges) waits for the uploader.
    public var hasPendingUploadBesidesTags: Bool {
        guard !kind.isLocalOnly, !itemID.isContainerRoot else { return false }
        if needsCreate || metadataDirty || timeDirty { return true }
        if case .dirty = state { return true }
        if case .uploading = state { return true }
        return false
    }
}

/// A deleted item whose delete has not reached the provider yet.
public struct Tombstone: Hashable, Sendable, Codable {
    /// The deleted item.
    public var itemID: ItemID
    /// Its container.
    public var container: ContainerID
    /// The provider version the delete is based on. When an upload of the item may have landed without our
    /// knowing, the remote's newer version may be our own: the delete's retry tag (this writer and this base)
    /// lets the provider tell it from someone else's change.
    public var remoteVersion: String?
    /// Ordering key among pending uploads.
    public var sequence: UInt64

    /// Creates a tombstone.
    public init(itemID: ItemID, container: ContainerID, remoteVersion: String?, sequence: UInt64) {
        self.itemID = itemID
        self.container = container
        self.remoteVersion = remoteVersion
        self.sequence = sequence
    }
}

extension Node {
    /// This node with the content `before` had (version file, size, generation, state), undoing a commit that made
    /// `after` of it; the times and dirty sequence the commit set go back too unless something changed them since.
    /// Everything else (name, place, mode, attributes, flags, and any field added later) stays as it is now.
    func withContent(of before: Node, undoing after: Node) -> Node {
        var restored = self
        restored.contentFile = before.contentFile
        restored.size = before.size
        restored.generation = before.generation
        restored.state = before.state
        if modificationTime == after.modificationTime { restored.modificationTime = before.modificationTime }
        if changeTime == after.changeTime { restored.changeTime = before.changeTime }
        if dirtySequence == after.dirtySequence { restored.dirtySequence = before.dirtySequence }
        return restored
    }
}
