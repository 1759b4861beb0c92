import FolioCore

/// What one FUSE request asks, its C arguments copied and checked (``CArguments``): the typed value the mount's
/// front (``FUSEFront``) sees first and one handler per operation (``FUSEHandlers``) then serves. Inodes are the
/// core's (the kernel's root id is already the view's root). A `write`'s bytes point into libfuse's buffer, so a
/// request is valid only during its callback; the payloads, which handlers carry into tasks, are `Sendable`.
public enum FUSERequest {
    /// `lookup` of a name in a folder.
    case lookup(Name)
    /// `forget` and `forget_multi`: the kernel dropped references to inodes.
    case forget([Forget])
    /// `getattr` of `ino`, through the open handle `handle` when the kernel names one.
    case getAttributes(ino: UInt64, handle: UInt64?)
    /// `setattr`.
    case setAttributes(SetAttributes)
    /// `readlink` of `ino`.
    case readSymlink(ino: UInt64)
    /// `mknod`: a file, FIFO, socket or device node.
    case makeNode(MakeNode)
    /// `mkdir`.
    case makeDirectory(MakeDirectory)
    /// `symlink`: a link at `at` to `target`.
    case makeSymlink(at: Name, target: String)
    /// `unlink`.
    case unlink(Name)
    /// `rmdir`.
    case removeDirectory(Name)
    /// `rename`.
    case rename(Rename)
    /// `link`: a hard link to `ino` at `at`.
    case link(ino: UInt64, at: Name)
    /// `open` of a file.
    case open(Open)
    /// `create`: a new file, opened.
    case create(Create)
    /// `read` through an open handle.
    case read(Read)
    /// `write` through an open handle (its bytes are libfuse's, valid during the callback only).
    case write(Write)
    /// `flush`: a `close()` of a descriptor of the open handle.
    case flush(handle: UInt64)
    /// `release`: the last descriptor of the open handle is gone.
    case release(handle: UInt64)
    /// `fsync` of an open handle.
    case synchronize(handle: UInt64)
    /// `fallocate` on an open handle.
    case allocate(Allocate)
    /// `lseek` to data or a hole (the kernel answers the other seeks itself).
    case seek(Seek)
    /// `opendir`.
    case openDirectory(Open)
    /// `readdir` and `readdirplus`.
    case readDirectory(ReadDirectory)
    /// `releasedir`.
    case releaseDirectory(handle: UInt64)
    /// `fsyncdir`.
    case synchronizeDirectory
    /// `statfs`.
    case statistics
    /// `setxattr`.
    case setExtendedAttribute(SetExtendedAttribute)
    /// `getxattr` of `name` on `ino`, into a buffer of `size` bytes (0: the caller asks for the size).
    case extendedAttribute(ino: UInt64, name: String, size: Int)
    /// `listxattr` of `ino`, into a buffer of `size` bytes (0: the caller asks for the size).
    case extendedAttributeNames(ino: UInt64, size: Int)
    /// `removexattr` of `name` on `ino`.
    case removeExtendedAttribute(ino: UInt64, name: String)

    /// A name in a folder (the folder's core inode).
    public struct Name: Hashable, Sendable {
        /// The folder.
        public var parent: UInt64
        /// The name in it.
        public var name: String

        /// Creates a name in `parent`.
        public init(parent: UInt64, name: String) {
            self.parent = parent
            self.name = name
        }
    }

    /// References to an inode the kernel dropped.
    public struct Forget: Hashable, Sendable {
        /// The inode.
        public var ino: UInt64
        /// How many lookups it forgets.
        public var count: UInt64
    }

    /// Whether the request changes the tree: its answer waits until the other views of the state dropped what the
    /// change made stale (``KernelNotifier/waitForTheOtherMounts(limit:)``).
    var changesTree: Bool {
        switch self {
        case .setAttributes, .makeNode, .makeDirectory, .makeSymlink, .unlink, .removeDirectory, .rename, .link,
             .create, .setExtendedAttribute, .removeExtendedAttribute:
            true
        default:
            false
        }
    }
}
