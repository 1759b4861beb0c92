import Foundation
import SystemPackage

/// The content cache: a folder of version files. A committed version is never changed again; a write session
/// writes to a new file that becomes a version when it is committed.
public struct ContentCache: Sendable {
    /// The folder holding the version files.
    public let directory: FilePath

    /// The shared empty version: the content of every new file until its first commit. Never removed.
    public static let emptyVersion = "empty"

    /// Opens (creating if needed) the cache in `directory`.
    public init(directory: FilePath) throws(FolioError) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(
                atPath: directory.string, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io("cannot create content cache \(directory): \(error)")
        }
        let empty = open(path(of: Self.emptyVersion).string, O_RDONLY | O_CREAT | O_CLOEXEC, 0o400)
        guard empty >= 0 else { throw .system(Errno(rawValue: errno), "create the empty version") }
        close(empty)
    }

    /// The path of version file `name`.
    public func path(of name: String) -> FilePath { directory.appending(name) }

    /// Creates a new empty version file open for reading and writing.
    public func makeFile() throws(FolioError) -> (name: String, fd: Int32) {
        for _ in 0..<8 {
            let name = "v" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
            let fd = open(path(of: name).string, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return (name, fd) }
            if errno != EEXIST { throw .system(Errno(rawValue: errno), "create version file") }
        }
        throw .io("cannot pick a version file name")
    }

    /// Opens version file `name` read-only; `.busy` when the process or system is out of descriptors or memory
    /// for now (worth trying again later), other errors as they come.
    public func openForReading(_ name: String) throws(FolioError) -> Int32 {
        let fd = open(path(of: name).string, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let error = Errno(rawValue: errno)
            if [.tooManyOpenFiles, .tooManyOpenFilesInSystem, .noMemory, .resourceTemporarilyUnavailable]
                .contains(error) {
                throw .busy("open version file \(name): \(error)")
            }
            throw .system(error, "open version file \(name)")
        }
        return fd
    }

    /// Opens version file `name` for reading and writing (a write session's own file).
    public func openForWriting(_ name: String) throws(FolioError) -> Int32 {
        let fd = open(path(of: name).string, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw .system(Errno(rawValue: errno), "open version file \(name)") }
        return fd
    }

    /// A new version file holding the first `size` bytes of `source`, open for reading and writing. Only the
    /// data is copied: the holes of a sparse file stay holes.
    public func makeCopy(of source: Int32, size: Int64) throws(FolioError) -> (name: String, fd: Int32) {
        let (name, fd) = try makeFile()
        do {
            try SparseFile.copy(from: source, to: fd, size: size)
        } catch {
            close(fd)
            remove(name)
            throw error
        }
        return (name, fd)
    }

    /// Starts reading `range` of `fd` into the page cache without waiting for it.
    public func prefetch(_ fd: Int32, _ range: Range<Int64>) {
        _ = posix_fadvise(fd, off_t(range.lowerBound), off_t(range.count), POSIX_FADV_WILLNEED)
    }

    /// Makes the content of `fd` durable.
    public func synchronize(_ fd: Int32) throws(FolioError) {
        while fdatasync(fd) != 0 {
            let error = Errno(rawValue: errno)
            if error == .interrupted { continue }
            throw .system(error, "fsync version file")
        }
    }

    /// Deletes version file `name`; open descriptors keep reading it.
    public func remove(_ name: String) {
        guard name != Self.emptyVersion else { return }
        unlink(path(of: name).string)
    }

    /// Names of all version files.
    public func allFiles() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.string)) ?? []
    }

    /// Space statistics of the filesystem holding the cache.
    public func statistics() -> FilesystemStatistics {
        var info = statvfs()
        if statvfs(directory.string, &info) != 0 {
            return FilesystemStatistics(
                blockSize: 4096, totalBlocks: 0, freeBlocks: 0, availableBlocks: 0, totalFiles: 0, freeFiles: 0,
                maximumNameLength: 255)
        }
        return FilesystemStatistics(
            blockSize: UInt64(info.f_frsize), totalBlocks: UInt64(info.f_blocks), freeBlocks: UInt64(info.f_bfree),
            availableBlocks: UInt64(info.f_bavail), totalFiles: UInt64(info.f_files), freeFiles: UInt64(info.f_ffree),
            maximumNameLength: 255)
    }
}
