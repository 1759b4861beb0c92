/// An open file handle.
struct OpenHandle: Sendable {
    /// The node the handle belongs to.
    var ino: UInt64
    /// The process that opened it.
    var processID: Int32
    /// A reader's own descriptor on the version it opened; `nil` for handles in a write session.
    var readFD: Int32?
    /// Size of the version a reader opened.
    var snapshotSize: Int64
    /// The write session this handle belongs to, if any.
    var sessionID: UInt64?
    /// Whether the handle may write.
    var canWrite: Bool
    /// Whether writes go to the end of the file.
    var append: Bool
    /// Whether the kernel caches this handle's data (counted in the page-cache group).
    var isCached: Bool
    /// Where the last read ended: a read starting there continues a sequential scan.
    var sequentialEnd: Int64 = 0
    /// How far ahead of a sequential scan the version file was asked to be read already.
    var prefetchedUntil: Int64 = 0
    /// The download filling the version file a reader of a placeholder opened (`nil` once it was complete at
    /// open, and for every other handle): its reads wait for their bytes.
    var partial: (any RangedContent)? = nil
}

/// The one write session of an item: every write handle of the owning process shares it.
struct WriteSession: Sendable {
    /// Unique id of the session.
    var id: UInt64
    /// The process that owns the session.
    var ownerProcessID: Int32
    /// Descriptor on the session's file.
    var fd: Int32
    /// The session's file in the content cache.
    var fileName: String
    /// The file was committed as a version: it must be copied before the next change.
    var fileIsCommitted: Bool
    /// Changes since the last commit.
    var hasUncommittedChanges: Bool
    /// Current size of the session's content.
    var size: Int64
    /// Open handles in the session.
    var handles: Set<UInt64>
    /// Descriptors of files the session left behind (closed when it ends).
    var retiredFDs: [Int32]
    /// A modification time set explicitly during the session (kept at commit).
    var explicitModificationTime: Timestamp?
    /// Held shared by writes into ``fd`` (outside the state lock), exclusive by a commit.
    let gate = SessionGate()
}

/// Which view of the content a cached handle sees: the kernel page cache may hold only one at a time.
enum PageCacheKey: Hashable, Sendable {
    /// Readers of a committed version file.
    case version(String)
    /// Handles of a write session.
    case session(UInt64)
}

/// What the kernel's page cache of one inode holds and who uses it.
struct PageCacheState: Sendable {
    /// The group of handles currently reading through the page cache.
    var activeKey: PageCacheKey?
    /// Number of cached handles in the active group.
    var activeCount = 0
    /// What the page cache was last filled with; `nil` when unknown.
    var contentKey: PageCacheKey?
}

/// One entry of a directory listing snapshot taken at `opendir`.
struct ListedEntry: Sendable {
    var name: String
    var ino: UInt64
    /// Listed in a virtual folder: the kernel must not keep the name (it comes and goes without a request).
    var isVolatile = false
}
