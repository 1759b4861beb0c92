import FolioCore
import Glibc
import SystemPackage

/// Thin typed wrappers over the POSIX calls the local provider needs. Every failure becomes a ``FolioError``
/// that names the path, mapped in one place by ``FolioError/system(_:_:)``.
///
/// Glibc's Swift module does not export `<sys/xattr.h>` or `renameat2`; those few functions are resolved once
/// from the C library with `dlsym` (see ``LibcExtras``).
enum SystemCalls {
    /// The last `errno` as a ``FolioError`` with context.
    static func lastError(_ operation: String, _ path: FilePath) -> FolioError {
        FolioError.system(Errno(rawValue: Glibc.errno), "\(operation) \(path)")
    }

    /// Retries a call while it fails with `EINTR`.
    static func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || Glibc.errno != EINTR { return result }
        }
    }

    // MARK: Clock

    /// The coarse real-time clock the kernel stamps file changes with: a change made after this call gets a
    /// modification and change time at or after the value returned.
    static func coarseClock() -> Timestamp {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        return Timestamp(seconds: Int64(now.tv_sec), nanoseconds: Int64(now.tv_nsec))
    }

    /// Sleeps until the coarse clock has moved on (its resolution, a few milliseconds at most).
    static func waitOneClockTick() {
        var resolution = timespec()
        clock_getres(CLOCK_REALTIME_COARSE, &resolution)
        var remaining = resolution
        while nanosleep(&resolution, &remaining) != 0 && Glibc.errno == EINTR { resolution = remaining }
    }

    // MARK: Status

    /// The status of `path` itself (symlinks are not followed), or `nil` if nothing is there.
    static func statusIfPresent(_ path: FilePath) throws -> FileStatus? {
        var raw = stat()
        if lstat(path.string, &raw) == 0 { return FileStatus(raw) }
        if Glibc.errno == ENOENT || Glibc.errno == ENOTDIR { return nil }
        throw lastError("lstat", path)
    }

    /// The status of `path` itself (symlinks are not followed).
    static func status(_ path: FilePath) throws -> FileStatus {
        guard let status = try statusIfPresent(path) else {
            throw FolioError.notFound(path.string)
        }
        return status
    }

    /// The status of an open file.
    static func status(of descriptor: FileDescriptor, path: FilePath) throws -> FileStatus {
        var raw = stat()
        guard fstat(descriptor.rawValue, &raw) == 0 else { throw lastError("fstat", path) }
        return FileStatus(raw)
    }

    /// Runs `body`, then closes `descriptor` whatever happened; a failed close after a successful body is an
    /// error (written data may be lost).
    static func closing<Result>(
        _ descriptor: FileDescriptor, path: FilePath, _ body: () async throws -> Result
    ) async throws -> Result {
        let result: Result
        do {
            result = try await body()
        } catch {
            try? descriptor.close()
            throw error
        }
        do {
            try descriptor.close()
        } catch let error as Errno {
            throw FolioError.system(error, "close \(path)")
        }
        return result
    }

    // MARK: Directories and links

    /// The names in a directory, without `.` and `..`. Names that are not valid UTF-8 are left out: they
    /// cannot be represented as item names.
    static func directoryEntries(_ path: FilePath) throws -> [String] {
        try entries(of: path).map(\.name).sorted()
    }

    /// The names of the folders in `path` (symlinks to folders excluded), told apart by the type `readdir` gives
    /// (the inode is looked at only where the filesystem does not give one): no `stat` per file.
    static func subfolders(_ path: FilePath) throws -> [String] {
        try entries(of: path).compactMap { name, type in
            if type == UInt8(DT_DIR) { return name }
            guard type == UInt8(DT_UNKNOWN) else { return nil }
            var info = stat()
            guard lstat(path.appending(name).string, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
            return name
        }
    }

    /// Every entry of a directory with the type `readdir` gives, in directory order, without `.`, `..` and names
    /// that are not valid UTF-8.
    private static func entries(of path: FilePath) throws -> [(name: String, type: UInt8)] {
        guard let stream = opendir(path.string) else { throw lastError("opendir", path) }
        defer { closedir(stream) }
        var found: [(name: String, type: UInt8)] = []
        while true {
            Glibc.errno = 0
            guard let entry = readdir(stream) else {
                if Glibc.errno != 0 { throw lastError("readdir", path) }
                break
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) {
                    String(validatingCString: $0)
                }
            }
            guard let name, name != ".", name != ".." else { continue }
            found.append((name, entry.pointee.d_type))
        }
        return found
    }

    /// The whole content of a small file (Folio's own bookkeeping: tags, descriptions), or `nil` when it is not
    /// there or cannot be read. Plain calls: a listing asks once per item, and most items have no such file.
    static func smallFileContents(_ path: FilePath) -> [UInt8]? {
        let descriptor = retryingInterrupts { open(path.string, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while true {
            if filled == bytes.count { bytes.append(contentsOf: [UInt8](repeating: 0, count: 4096)) }
            let count = bytes.withUnsafeMutableBytes { buffer in
                retryingInterrupts { read(descriptor, buffer.baseAddress! + filled, buffer.count - filled) }
            }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            filled += count
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    /// Creates a directory (fails with `.exists` if the name is taken).
    static func makeDirectory(_ path: FilePath, permissions: UInt32) throws {
        guard mkdir(path.string, mode_t(permissions)) == 0 else { throw lastError("mkdir", path) }
    }

    /// Creates a directory and its missing parents; an existing directory is fine.
    static func makeDirectories(_ path: FilePath, permissions: UInt32 = 0o755) throws {
        if let status = try statusIfPresent(path) {
            guard status.kind == .directory else { throw FolioError.notDirectory(path.string) }
            return
        }
        var parent = path
        if parent.removeLastComponent(), !parent.isEmpty, parent != path {
            try makeDirectories(parent, permissions: permissions)
        }
        if mkdir(path.string, mode_t(permissions)) != 0 && Glibc.errno != EEXIST {
            throw lastError("mkdir", path)
        }
    }

    /// Removes an empty directory.
    static func removeDirectory(_ path: FilePath) throws {
        guard rmdir(path.string) == 0 else { throw lastError("rmdir", path) }
    }

    /// Removes a file or symlink.
    static func removeFile(_ path: FilePath) throws {
        guard unlink(path.string) == 0 else { throw lastError("unlink", path) }
    }

    /// Whether two files have the same bytes (sizes first, then the contents in 1 MiB chunks); `false` if either
    /// cannot be read.
    static func sameContents(_ first: FilePath, _ other: FileDescriptor) -> Bool {
        guard let one = try? FileDescriptor.open(first, .readOnly) else { return false }
        defer { try? one.close() }
        var a = stat()
        var b = stat()
        guard fstat(one.rawValue, &a) == 0, fstat(other.rawValue, &b) == 0, a.st_size == b.st_size else { return false }
        var left = [UInt8](repeating: 0, count: 1 << 20)
        var right = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while offset < Int64(a.st_size) {
            let count = left.withUnsafeMutableBytes { pread(one.rawValue, $0.baseAddress, $0.count, off_t(offset)) }
            let otherCount = right.withUnsafeMutableBytes {
                pread(other.rawValue, $0.baseAddress, $0.count, off_t(offset))
            }
            guard count > 0, count == otherCount, left.prefix(count) == right.prefix(count) else { return false }
            offset += Int64(count)
        }
        return true
    }

    /// Removes a file or symlink if present, ignoring every error (clean-up paths).
    static func removeFileQuietly(_ path: FilePath) {
        _ = unlink(path.string)
    }

    /// Creates a symlink at `path` pointing to `target`.
    static func makeSymlink(at path: FilePath, target: String) throws {
        guard symlink(target, path.string) == 0 else { throw lastError("symlink", path) }
    }

    /// The target of a symlink.
    static func symlinkTarget(_ path: FilePath) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path.string, &buffer, buffer.count - 1)
        guard count >= 0 else { throw lastError("readlink", path) }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Opens the folder at `path` (not following a symlink) for use as the folder of `*at` calls and for `fsync`.
    static func openFolder(_ path: FilePath) throws -> FileDescriptor {
        let opened = open(path.string, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else { throw lastError("open the folder", path) }
        return FileDescriptor(rawValue: opened)
    }

    /// Makes the entries of the open folder `folder` (at `path`, for errors) durable: `fsync` of the folder.
    static func syncFolder(_ folder: FileDescriptor, path: FilePath) throws {
        guard fsync(folder.rawValue) == 0 else { throw lastError("fsync the folder", path) }
    }

    /// Makes the entries of the folder at `path` durable (opens it for the `fsync`).
    static func syncFolder(at path: FilePath) throws {
        let folder = try openFolder(path)
        defer { try? folder.close() }
        try syncFolder(folder, path: path)
    }

    /// A new unnamed file in the folder `folder` (`O_TMPFILE`), open for reading and writing; `nil` when the
    /// filesystem (or kernel) has none (`EOPNOTSUPP`, `EISDIR`, `EINVAL`).
    static func makeUnnamedFile(in folder: FilePath) throws -> FileDescriptor? {
        let descriptor = open(folder.string, LibcExtras.unnamedFileFlag | O_RDWR | O_CLOEXEC, mode_t(0o600))
        guard descriptor < 0 else { return FileDescriptor(rawValue: descriptor) }
        let error = errno
        if error == EOPNOTSUPP || error == EISDIR || error == EINVAL { return nil }
        throw FolioError.system(Errno(rawValue: error), "create an unnamed file in \(folder)")
    }

    /// Gives the open unnamed file `file` the name `name` in the open folder `folder` (`linkat` through
    /// `/proc/self/fd`); `.exists` if the name is taken. `path` names the destination in errors.
    static func link(_ file: FileDescriptor, into folder: FileDescriptor, as name: String, path: FilePath) throws {
        guard linkat(AT_FDCWD, "/proc/self/fd/\(file.rawValue)", folder.rawValue, name, AT_SYMLINK_FOLLOW) == 0 else {
            throw lastError("link the staged upload to", path)
        }
    }

    /// Renames `source` to `name` in the open folder `folder` atomically, failing with `.exists` if the name is
    /// taken. `path` names the destination in errors.
    static func renameWithoutReplacing(
        _ source: FilePath, into folder: FileDescriptor, as name: String, path: FilePath
    ) throws {
        let result = LibcExtras.renameat2(AT_FDCWD, source.string, folder.rawValue, name, renameNoReplace)
        guard result == 0 else { throw lastError("rename \(source) to", path) }
    }

    /// Renames `source` to `destination`, replacing what is there.
    static func rename(_ source: FilePath, to destination: FilePath) throws {
        guard Glibc.rename(source.string, destination.string) == 0 else {
            throw lastError("rename to \(destination.string) from", source)
        }
    }

    /// Renames `source` to `destination` atomically, failing with `.exists` if the destination is taken.
    static func renameWithoutReplacing(_ source: FilePath, to destination: FilePath) throws {
        try renameWithoutReplacing(
            source, into: FileDescriptor(rawValue: AT_FDCWD), as: destination.string, path: destination)
    }

    /// `RENAME_NOREPLACE` from `<linux/fs.h>`.
    static let renameNoReplace: UInt32 = 1

    // MARK: Locks

    /// Takes an exclusive `flock` of the open file `file` (at `path`, for errors) if nobody else holds one:
    /// `false` when another open file description holds it.
    static func tryExclusiveLock(_ file: FileDescriptor, path: FilePath) throws -> Bool {
        if retryingInterrupts({ flock(file.rawValue, LOCK_EX | LOCK_NB) }) == 0 { return true }
        guard Glibc.errno == EWOULDBLOCK else { throw lastError("lock", path) }
        return false
    }

    // MARK: Permissions and times

    /// Sets permission bits (not for symlinks).
    static func setPermissions(_ path: FilePath, _ permissions: UInt32) throws {
        guard chmod(path.string, mode_t(permissions & 0o7777)) == 0 else { throw lastError("chmod", path) }
    }

    /// Sets the modification time of `path` itself (symlinks are not followed); the access time is left.
    static func setModificationTime(_ path: FilePath, _ time: Timestamp) throws {
        var times = [
            timespec(tv_sec: 0, tv_nsec: utimeOmit),
            timespec(tv_sec: Int(time.seconds), tv_nsec: Int(time.nanoseconds)),
        ]
        guard utimensat(AT_FDCWD, path.string, &times, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw lastError("utimensat", path)
        }
    }

    /// `UTIME_OMIT` from `<sys/stat.h>` (a macro Swift does not import): leave this time as it is.
    static let utimeOmit = (1 << 30) - 2

    // MARK: Extended attributes

    /// The value of an extended attribute of `path` itself, or `nil` when it is absent (or the object cannot
    /// carry user attributes, like a symlink).
    static func extendedAttribute(_ name: String, of path: FilePath) throws -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = LibcExtras.lgetxattr(path.string, name, &buffer, buffer.count)
            if count >= 0 { return String(decoding: buffer[0..<count], as: UTF8.self) }
            switch Glibc.errno {
            case ENODATA, ENOTSUP, EPERM: return nil
            case ERANGE: buffer = [UInt8](repeating: 0, count: buffer.count * 4)
            default: throw lastError("getxattr \(name)", path)
            }
        }
    }

    /// Sets an extended attribute of `path` itself.
    static func setExtendedAttribute(
        _ name: String, _ value: String, of path: FilePath, onlyIfAbsent: Bool = false
    ) throws {
        let bytes = Array(value.utf8)
        let flags: Int32 = onlyIfAbsent ? 1 : 0  // XATTR_CREATE: fail with EEXIST if it is already there
        let result = bytes.withUnsafeBytes { LibcExtras.lsetxattr(path.string, name, $0.baseAddress, $0.count, flags) }
        guard result == 0 else { throw lastError("setxattr \(name)", path) }
    }

    /// Sets an extended attribute of an open file.
    static func setExtendedAttribute(
        _ name: String, _ value: String, of descriptor: FileDescriptor, path: FilePath
    ) throws {
        let bytes = Array(value.utf8)
        let result = bytes.withUnsafeBytes {
            LibcExtras.fsetxattr(descriptor.rawValue, name, $0.baseAddress, $0.count, 0)
        }
        guard result == 0 else { throw lastError("fsetxattr \(name)", path) }
    }

    /// Removes an extended attribute of `path` itself; an absent attribute is fine.
    static func removeExtendedAttribute(_ name: String, of path: FilePath) throws {
        guard LibcExtras.lremovexattr(path.string, name) == 0 || Glibc.errno == ENODATA else {
            throw lastError("removexattr \(name)", path)
        }
    }

    /// The value of an extended attribute of an open file, or `nil` when it is absent.
    static func extendedAttribute(_ name: String, of descriptor: FileDescriptor, path: FilePath) throws -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = LibcExtras.fgetxattr(descriptor.rawValue, name, &buffer, buffer.count)
            if count >= 0 { return String(decoding: buffer[0..<count], as: UTF8.self) }
            switch Glibc.errno {
            case ENODATA, ENOTSUP: return nil
            case ERANGE: buffer = [UInt8](repeating: 0, count: buffer.count * 4)
            default: throw lastError("fgetxattr \(name)", path)
            }
        }
    }
}
