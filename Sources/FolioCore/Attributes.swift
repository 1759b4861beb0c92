/// What `stat` reports for a node.
public struct Attributes: Hashable, Sendable {
    /// Inode number.
    public var ino: UInt64
    /// Kind of the node.
    public var kind: ItemKind
    /// Permission bits (`0o7777`).
    public var permissions: UInt32
    /// Link count.
    public var linkCount: UInt32
    /// Owner.
    public var uid: UInt32
    /// Group.
    public var gid: UInt32
    /// Size in bytes.
    public var size: Int64
    /// Last access.
    public var accessTime: Timestamp
    /// Last content change.
    public var modificationTime: Timestamp
    /// Last status change.
    public var changeTime: Timestamp
    /// Open handles see different contents (a writer next to readers, or readers of an older version):
    /// the kernel must not cache these attributes, so every read past its idea of the end asks again with
    /// the reader's own handle.
    public var isVolatile: Bool = false
    /// The name these attributes were found under may change without a request through the mount (an entry
    /// of a virtual folder): the kernel must not keep the name.
    public var isVolatileEntry: Bool = false

    /// `st_mode`: type and permission bits.
    public var mode: UInt32 { kind.typeBits | (permissions & 0o7777) }

    /// 512-byte blocks the local content occupies (holes take none); `nil` when unknown (a placeholder).
    public var allocatedBlocks: Int64?

    /// 512-byte blocks the content occupies: the local content's when known, else an estimate from the size.
    public var blocks: Int64 { allocatedBlocks ?? (size + 511) / 512 }

    /// Creates attributes.
    public init(
        ino: UInt64, kind: ItemKind, permissions: UInt32, linkCount: UInt32, uid: UInt32, gid: UInt32,
        size: Int64, accessTime: Timestamp, modificationTime: Timestamp, changeTime: Timestamp
    ) {
        self.ino = ino
        self.kind = kind
        self.permissions = permissions
        self.linkCount = linkCount
        self.uid = uid
        self.gid = gid
        self.size = size
        self.accessTime = accessTime
        self.modificationTime = modificationTime
        self.changeTime = changeTime
    }
}

/// Who is asking: the caller's credentials and process.
public struct RequestContext: Hashable, Sendable {
    /// Caller's user id.
    public var uid: UInt32
    /// Caller's group id.
    public var gid: UInt32
    /// Caller's process id (thread-group id); `0` when unknown (kernel-initiated requests).
    public var processID: Int32

    /// Creates a context.
    public init(uid: UInt32, gid: UInt32, processID: Int32) {
        self.uid = uid
        self.gid = gid
        self.processID = processID
    }

    /// The daemon itself.
    public static let internalRequest = RequestContext(uid: 0, gid: 0, processID: 0)
}

/// Changes requested by `setattr`; `nil` leaves a field alone.
public struct AttributeChanges: Hashable, Sendable {
    /// New permission bits.
    public var permissions: UInt32?
    /// New owner.
    public var uid: UInt32?
    /// New group.
    public var gid: UInt32?
    /// New size (truncate or extend).
    public var size: Int64?
    /// New access time.
    public var accessTime: Timestamp?
    /// New modification time.
    public var modificationTime: Timestamp?

    /// Creates a change set.
    public init(
        permissions: UInt32? = nil, uid: UInt32? = nil, gid: UInt32? = nil, size: Int64? = nil,
        accessTime: Timestamp? = nil, modificationTime: Timestamp? = nil
    ) {
        self.permissions = permissions
        self.uid = uid
        self.gid = gid
        self.size = size
        self.accessTime = accessTime
        self.modificationTime = modificationTime
    }
}

/// Flags of `rename`.
public struct RenameFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Fail if the target exists.
    public static let noReplace = RenameFlags(rawValue: 1)
    /// Swap source and target.
    public static let exchange = RenameFlags(rawValue: 2)
}

/// How an open file should be cached by the kernel.
public enum CachePolicy: Hashable, Sendable {
    /// Use the page cache and keep what is cached from earlier opens.
    case keepCache
    /// Use the page cache but drop what earlier opens cached.
    case freshCache
    /// Bypass the page cache: this handle's view differs from other open handles' views.
    case directIO
}

/// The result of opening a file.
public struct OpenedFile: Hashable, Sendable {
    /// The handle to pass to read, write and release.
    public var handle: UInt64
    /// How the kernel should cache this handle's data.
    public var cachePolicy: CachePolicy

    /// The handle cannot write, so its `close()` needs no flush (no commit can follow from it).
    public var isReadOnly: Bool

    /// Creates a result.
    public init(handle: UInt64, cachePolicy: CachePolicy, isReadOnly: Bool = false) {
        self.handle = handle
        self.cachePolicy = cachePolicy
        self.isReadOnly = isReadOnly
    }
}

/// One directory entry.
public struct DirectoryEntry: Hashable, Sendable {
    /// The entry's name.
    public var name: String
    /// The entry's attributes.
    public var attributes: Attributes
}

/// Filesystem-wide numbers for `statfs`.
public struct FilesystemStatistics: Hashable, Sendable {
    /// Block size.
    public var blockSize: UInt64
    /// Total blocks.
    public var totalBlocks: UInt64
    /// Free blocks.
    public var freeBlocks: UInt64
    /// Blocks available to unprivileged users.
    public var availableBlocks: UInt64
    /// Total inodes.
    public var totalFiles: UInt64
    /// Free inodes.
    public var freeFiles: UInt64
    /// Longest name.
    public var maximumNameLength: UInt64
}
