import FolioCore
import Foundation
import Glibc
import SystemPackage

extension LocalProvider {
    /// Copies a file's content to `destination` in chunks, reporting progress and pacing to the simulated
    /// bandwidth. `.conflict` if the file is not (or no longer, while being read) at `version`; `.notFound` if it
    /// is gone; `.interrupted` when the task is cancelled.
    public func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        try await recognizing("fetch \(id)") {
            try await fetch(id, in: container, version: version, range: nil, to: destination, progress: progress)
        }
    }

    /// Copies bytes `range` of a file into `destination` at the same offsets (created if missing, never truncated,
    /// other bytes untouched; holes stay holes), the range cut at the file's end. The simulated network applies to
    /// this call alone: one latency, and the range's bytes paced to the bandwidth. `.conflict` if the file is not
    /// (or no longer, while being read) at `version`; `.notFound` if it is gone; `.interrupted` when cancelled.
    public func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, range: Range<Int64>, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        try await recognizing("fetch \(id)") {
            try await fetch(id, in: container, version: version, range: range, to: destination, progress: progress)
        }
    }

    /// ``fetchContents(of:in:version:to:progress:)`` (`range` nil: the whole file, `destination` truncated) and
    /// ``fetchContents(of:in:version:range:to:progress:)`` once the remote folder is recognized.
    private func fetch(
        _ id: ItemID, in container: ContainerID, version: String, range: Range<Int64>?, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        if let range, range.lowerBound < 0 { throw FolioError.invalidArgument("fetch of \(id): range \(range)") }
        let what = range.map { "fetch of bytes \($0.lowerBound)..<\($0.upperBound) of \(id)" } ?? "fetch \(id)"
        let simulation = try await admit(what)
        let (source, item, status) = try withTree("fetch \(id)") { tree in
            guard let located = try tree.locate(id, in: container) else {
                throw FolioError.notFound("item \(id) in \(container)")
            }
            return try Self.openForReading(located, tree: tree, version: version)
        }
        defer { try? source.close() }
        let output: FileDescriptor
        do {
            output = try FileDescriptor.open(
                destination, .writeOnly, options: range == nil ? [.create, .truncate] : [.create],
                permissions: .ownerReadWrite
            )
        } catch let error as Errno {
            throw FolioError.system(error, "open \(destination) to fetch \(id)")
        }
        try await SystemCalls.closing(output, path: destination) {
            let copier = ContentCopier(bandwidthBytesPerSecond: simulation.bandwidthBytesPerSecond, link: downlink)
            if let range {
                _ = try await copier.copy(range, from: source, to: output, what: what, progress: progress)
            } else {
                _ = try await copier.copy(
                    from: source, to: output, what: "fetch of \(item.name)", progress: progress)
            }
        }
        let after = try SystemCalls.status(of: source, path: FilePath(item.name))
        guard after.hasSameContent(as: status) else {
            throw FolioError.conflict("\(item.name) (\(id)) changed on the remote while it was being fetched")
        }
        return item
    }

    /// Opens a located file and checks, on the open descriptor, that it is the item at `version`.
    private static func openForReading(
        _ located: LocatedItem, tree: RemoteTree, version: String
    ) throws -> (FileDescriptor, RemoteItem, FileStatus) {
        switch located.kind {
        case .directory: throw FolioError.isDirectory("\(located.name) (\(located.id)) has no content")
        case .symlink: throw FolioError.invalidArgument("\(located.name) (\(located.id)) is a symlink")
        default: break
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(located.path, .readOnly, options: [.noFollow])
        } catch let error as Errno {
            throw FolioError.system(error, "open \(located.path)")
        }
        do {
            let status = try SystemCalls.status(of: descriptor, path: located.path)
            let attributes = try tree.storedAttributes(of: descriptor, path: located.path, status: status)
            let components = tree.components(of: located.path, in: located.container)
            guard tree.fileOrFolderID(attributes: attributes, status: status, components: components) == located.id
            else {
                throw FolioError.conflict("\(located.name) (\(located.id)) was replaced on the remote")
            }
            var opened = located
            opened.status = status
            opened.attributes = attributes
            let item = try tree.remoteItem(for: opened)
            guard item.version == version else {
                throw FolioError.conflict(
                    "\(located.name) (\(located.id)) is at version \(item.version) on the remote, not \(version)"
                )
            }
            return (descriptor, item, status)
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    /// Copies an upload's content into a new file of the staging folder (paced to the simulated bandwidth,
    /// cancellable) and returns it open — the caller puts it into place or discards it. A big file is on disk
    /// when this returns (an `fsync` of its own, which does not write out everything else the disk has pending,
    /// such as the version it is uploaded from); a small one is not yet: the caller makes it durable with the
    /// other uploads in flight (``DiskFlushGroup``) before putting it into place, and its new name after.
    /// `prepare` runs once the content is copied, before it is flushed (a create gives the file its attributes
    /// there, outside the tree's lock).
    func stage(
        _ contents: FilePath, simulation: NetworkSimulation, what: String,
        prepare: (inout StagedUpload) throws -> Void = { _ in }
    ) async throws -> StagedUpload {
        let input: FileDescriptor
        do {
            input = try FileDescriptor.open(contents, .readOnly)
        } catch let error as Errno {
            throw FolioError.system(error, "open \(contents) for the \(what)")
        }
        defer { try? input.close() }
        var upload = try staging.newFile("upload")
        do {
            let copier = ContentCopier(bandwidthBytesPerSecond: simulation.bandwidthBytesPerSecond, link: uplink)
            let size = try await copier.copy(from: input, to: upload.descriptor, what: what, progress: { _ in })
            upload.isSmall = size < DiskFlushGroup.smallFileLimit
            try prepare(&upload)
            if !upload.isSmall, fsync(upload.descriptor.rawValue) != 0 {
                throw FolioError.system(Errno(rawValue: errno), "fsync the staged \(what)")
            }
            return upload
        } catch let error as Errno {
            upload.discard(placed: false)
            throw FolioError.system(error, "stage the \(what)")
        } catch {
            upload.discard(placed: false)
            throw error
        }
    }

    /// Whether content at `contents` (none: `nil`) is small enough to be made durable with the other uploads
    /// (``DiskFlushGroup/smallFileLimit``); a file that cannot be read counts as small (its upload fails soon).
    static func isSmall(_ contents: FilePath?) -> Bool {
        guard let contents else { return true }
        var raw = stat()
        guard stat(contents.string, &raw) == 0 else { return true }
        return Int64(raw.st_size) < DiskFlushGroup.smallFileLimit
    }

    /// An empty file in the staging folder, open (the content of a file created without any).
    func stageEmptyFile() throws -> StagedUpload {
        try staging.newFile("empty")
    }
}
