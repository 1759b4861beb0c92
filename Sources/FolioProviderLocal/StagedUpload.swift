import FolioCore
import Foundation
import Glibc
import SystemPackage

/// An upload's content in a new file of the staging folder (``StagingFolder/newFile(_:)``), still open: it gets
/// its final mode, time and attributes through the descriptor, is put into place (``place(at:)``,
/// ``replace(_:)``), and is closed (or removed, if it never got there) by ``discard(placed:)``. Unnamed until it
/// is placed where the filesystem allows it.
struct StagedUpload: Sendable {
    /// Where it is staged if it has a name there; `nil` for an unnamed file.
    let path: FilePath?
    /// The staging folder.
    let staging: FilePath
    /// The open file (read and write).
    let descriptor: FileDescriptor
    /// Whether it is made durable with the other uploads in flight (``DiskFlushGroup``) rather than on its own.
    var isSmall = true
    /// Its status and attributes once ``finish(onDisk:modificationTime:attributes:)`` gave it them.
    private(set) var finished: (status: FileStatus, attributes: StoredAttributes)?

    /// A staged file open as `descriptor` in `staging`, named `path` there (`nil`: unnamed).
    init(path: FilePath?, staging: FilePath, descriptor: FileDescriptor) {
        self.path = path
        self.staging = staging
        self.descriptor = descriptor
    }

    /// Gives the file the bits `onDisk` and the modification time `time` (if any), then the attributes
    /// `attributes` makes from its final status (on the file itself unless `onFile` is false: an adopted folder
    /// keeps them in its id map); returns that status and those attributes.
    @discardableResult
    mutating func finish(
        onDisk mode: UInt32, modificationTime time: Timestamp?, onFile: Bool = true,
        attributes: (FileStatus) -> StoredAttributes
    ) throws -> (status: FileStatus, attributes: StoredAttributes) {
        guard fchmod(descriptor.rawValue, mode_t(mode & 0o7777)) == 0 else {
            throw SystemCalls.lastError("fchmod", described)
        }
        if let time {
            var times = [
                timespec(tv_sec: 0, tv_nsec: SystemCalls.utimeOmit),
                timespec(tv_sec: Int(time.seconds), tv_nsec: Int(time.nanoseconds)),
            ]
            guard futimens(descriptor.rawValue, &times) == 0 else {
                throw SystemCalls.lastError("futimens", described)
            }
        }
        let status = try SystemCalls.status(of: descriptor, path: described)
        let stored = attributes(status)
        if onFile { try stored.write(to: descriptor, path: described) }
        finished = (status, stored)
        return (status, stored)
    }

    /// Puts the file at `destination`, which must be free: `.exists` if it is taken (nothing is replaced).
    func place(at destination: FilePath) throws {
        try place(in: FileDescriptor(rawValue: AT_FDCWD), as: destination.string, path: destination)
    }

    /// Puts the file into the open folder `folder` as `name` (at `path`, for errors), which must be free:
    /// `.exists` if it is taken (nothing is replaced).
    func place(in folder: FileDescriptor, as name: String, path destination: FilePath) throws {
        if let path {
            try SystemCalls.renameWithoutReplacing(path, into: folder, as: name, path: destination)
        } else {
            try SystemCalls.link(descriptor, into: folder, as: name, path: destination)
        }
    }

    /// Puts the file at `destination` in one step, replacing what is there.
    func replace(_ destination: FilePath) throws {
        guard let path else {
            // A name first, in the staging folder, then renamed over: a link cannot replace.
            let named = staging.appending(ItemName.internalPrefix + "replace-" + UUID().uuidString)
            try place(at: named)
            do {
                try SystemCalls.rename(named, to: destination)
            } catch {
                SystemCalls.removeFileQuietly(named)
                throw error
            }
            return
        }
        try SystemCalls.rename(path, to: destination)
    }

    /// Whether the file at `other` has exactly this content.
    func hasSameContents(as other: FilePath) -> Bool {
        SystemCalls.sameContents(other, descriptor)
    }

    /// Closes the file, and removes its staging name unless it was `placed` (an unnamed file just goes away).
    func discard(placed: Bool) {
        try? descriptor.close()
        if !placed, let path { SystemCalls.removeFileQuietly(path) }
    }

    /// How the file is named in errors.
    private var described: FilePath { path ?? FilePath("\(staging.string)/(unnamed upload)") }
}
