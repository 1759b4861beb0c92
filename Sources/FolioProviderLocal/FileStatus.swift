import FolioCore
import Glibc

/// What `lstat`/`fstat` say about a filesystem object, in Folio's terms.
struct FileStatus: Hashable, Sendable {
    /// The kind of object, or `nil` for objects a provider cannot store (devices, FIFOs, sockets).
    var kind: ItemKind?
    /// Size in bytes (for a symlink: the length of its target).
    var size: Int64
    /// Last content modification.
    var modificationTime: Timestamp
    /// Last status change.
    var changeTime: Timestamp
    /// Permission bits (`0o7777` mask).
    var permissions: UInt32
    /// The device the object lives on.
    var device: UInt64
    /// The inode number.
    var inode: UInt64
    /// How many names the object has (a file with more than one is hard-linked).
    var linkCount: UInt64

    /// Converts a raw `stat` record.
    init(_ raw: stat) {
        switch raw.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        default: kind = nil
        }
        size = Int64(raw.st_size)
        modificationTime = Timestamp(seconds: Int64(raw.st_mtim.tv_sec), nanoseconds: Int64(raw.st_mtim.tv_nsec))
        changeTime = Timestamp(seconds: Int64(raw.st_ctim.tv_sec), nanoseconds: Int64(raw.st_ctim.tv_nsec))
        permissions = UInt32(raw.st_mode) & 0o7777
        device = UInt64(raw.st_dev)
        inode = UInt64(raw.st_ino)
        linkCount = UInt64(raw.st_nlink)
    }

    /// Whether two statuses describe the same content of the same object (inode, size and modification time);
    /// renames and attribute changes do not count.
    func hasSameContent(as other: FileStatus) -> Bool {
        inode == other.inode && device == other.device && size == other.size
            && modificationTime == other.modificationTime
    }
}
