import CFUSE
import Glibc
import SystemPackage

/// One system call the replay helper makes on the mount (see ``ChangeReplayer``), with paths relative to the
/// mount's root. Sent to the helper as one JSON line.
struct ReplayOperation: Codable, Sendable, Equatable {
    /// Which system call.
    enum Kind: String, Codable, Sendable {
        /// `mknod` of a regular file (CREATE).
        case makeFile
        /// `mkdir` (CREATE, ISDIR).
        case makeDirectory
        /// `symlink` (CREATE).
        case makeSymlink
        /// `rename` of `path` to `destination` (MOVED_FROM, MOVED_TO).
        case rename
        /// `unlink` (DELETE, and DELETE_SELF for a watch on the file).
        case unlink
        /// `rmdir` (DELETE, ISDIR).
        case removeDirectory
        /// `utimensat` of the modification time to `seconds`.`nanoseconds` (MODIFY).
        case setModificationTime
        /// `utimensat` of both times, the access time to now (ATTRIB: what `touch` fires).
        case setTimes
        /// An open for writing and a close (OPEN, CLOSE_WRITE).
        case openForWriting
    }

    /// Which system call.
    var kind: Kind
    /// The path it is made on.
    var path: String
    /// A rename's new path.
    var destination: String?
    /// The modification time's seconds, for `utimensat`.
    var seconds: Int64?
    /// The modification time's nanoseconds, for `utimensat`.
    var nanoseconds: Int64?

    /// Makes the call relative to the folder `root` (a descriptor of the mount's root); returns the error, `nil`
    /// if it succeeded.
    func perform(in root: Int32) -> Errno? {
        let result: Int32
        switch kind {
        case .makeFile: result = mknodat(root, path, S_IFREG | 0o644, 0)
        case .makeDirectory: result = mkdirat(root, path, 0o755)
        case .makeSymlink: result = symlinkat(".", root, path)
        case .rename: result = renameat(root, path, root, destination ?? path)
        case .unlink: result = unlinkat(root, path, 0)
        case .removeDirectory: result = unlinkat(root, path, AT_REMOVEDIR)
        case .setModificationTime, .setTimes:
            // The access time left alone fires MODIFY; set too, ATTRIB.
            var times = [
                timespec(tv_sec: 0, tv_nsec: kind == .setTimes ? cfuse_utime_now : cfuse_utime_omit),
                timespec(tv_sec: Int(seconds ?? 0), tv_nsec: Int(nanoseconds ?? 0)),
            ]
            result = utimensat(root, path, &times, AT_SYMLINK_NOFOLLOW)
        case .openForWriting:
            let fd = openat(root, path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
            result = fd < 0 ? -1 : close(fd)
        }
        return result == 0 ? nil : Errno(rawValue: errno)
    }
}
