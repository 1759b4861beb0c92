import FolioCore

/// Options of a FUSE mount.
public struct MountOptions: Sendable {
    /// Where to mount.
    public var mountpoint: String
    /// The source shown in the mount table (`fsname`).
    public var source: String
    /// Let other users use the mount (`allow_other`); with `default_permissions` the kernel checks modes.
    public var allowOther: Bool
    /// How long the kernel may cache entries and attributes (explicit invalidation keeps them fresh).
    public var cacheTimeout: Double
    /// Worker threads.
    public var maxThreads: Int
    /// Log every request (libfuse debug output).
    public var debug: Bool
    /// Readahead of the mount in KiB (set where permitted; 0 keeps the kernel's default).
    public var readaheadKiB: Int
    /// The core's inode shown as the mount's root: the root of the mounted view (see
    /// ``FolioFileSystem/rootIno(of:)``).
    public var rootIno: UInt64

    /// Creates options.
    public init(
        mountpoint: String, source: String, allowOther: Bool = false, cacheTimeout: Double = 3600,
        maxThreads: Int = 16, debug: Bool = false, readaheadKiB: Int = 8192, rootIno: UInt64 = FolioFileSystem.rootIno
    ) {
        self.rootIno = rootIno
        self.readaheadKiB = readaheadKiB
        self.mountpoint = mountpoint
        self.source = source
        self.allowOther = allowOther
        self.cacheTimeout = cacheTimeout
        self.maxThreads = maxThreads
        self.debug = debug
    }
}
