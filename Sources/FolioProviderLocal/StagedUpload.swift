import FolioCore
import Glibc
import SystemPackage

/// An upload's content, copied into the staging folder and still open: it gets its final mode, time and
/// attributes through the descriptor, is renamed into place, and is closed (or removed, if it never got there)
/// by ``discard(renamed:)``.
struct StagedUpload: Sendable {
    /// Where it is staged.
    let path: FilePath
    /// The open file.
    let descriptor: FileDescriptor
    /// Whether it is made durable with the other uploads in flight (``DiskFlushGroup``) rather than on its own.
    let isSmall: Bool
    /// Its status and attributes once ``finish(onDisk:modificationTime:attributes:)`` gave it them.
    private(set) var finished: (status: FileStatus, attributes: StoredAttributes)?

    /// Gives the file the bits `onDisk` and the modification time `time` (if any), then the attributes
    /// `attributes` makes from its final status; returns that status and those attributes.
    @discardableResult
    mutating func finish(
        onDisk mode: UInt32, modificationTime time: Timestamp?, attributes: (FileStatus) -> StoredAttributes
    ) throws -> (status: FileStatus, attributes: StoredAttributes) {
        guard fchmod(descriptor.rawValue, mode_t(mode & 0o7777)) == 0 else {
            throw SystemCalls.lastError("fchmod", path)
        }
        if let time {
            var times = [
                timespec(tv_sec: 0, tv_nsec: SystemCalls.utimeOmit),
                timespec(tv_sec: Int(time.seconds), tv_nsec: Int(time.nanoseconds)),
            ]
            guard futimens(descriptor.rawValue, &times) == 0 else { throw SystemCalls.lastError("futimens", path) }
        }
        let status = try SystemCalls.status(of: descriptor, path: path)
        let stored = attributes(status)
        try stored.write(to: descriptor, path: path)
        finished = (status, stored)
        return (status, stored)
    }

    /// Closes the file, and removes it unless it was `renamed` into place.
    func discard(renamed: Bool) {
        try? descriptor.close()
        if !renamed { SystemCalls.removeFileQuietly(path) }
    }
}
