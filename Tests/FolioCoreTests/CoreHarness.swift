import FolioCore
import FolioStore
import FolioTesting
import Foundation
import Logging
import SystemPackage
import XCTest

/// The filesystem core on a real store and content cache in a temporary folder, driven by paths, without
/// FUSE. ``remount()`` builds a new core over the same files, as a daemon restart does. Given a `clock`, the
/// save window runs on it (the test moves it), not on the system's.
final class CoreHarness {
    let directory: String
    private(set) var store: SQLiteMetadataStore
    private(set) var fileSystem: FolioFileSystem
    let configuration: FileSystemConfiguration

    init(
        writeWait: Duration = .milliseconds(200), groupWriteDelay: Duration = .milliseconds(20),
        saveWindow: Duration = .seconds(3), clock: ManualClock? = nil,
        beforeContentWrite: (@Sendable () -> Void)? = nil,
        beforeStoreWrite: (@Sendable (_ durable: Bool) -> Void)? = nil, loadsOnDemand: Bool = false
    ) throws {
        directory = NSTemporaryDirectory() + "folio-core-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        configuration = FileSystemConfiguration(
            writeWaitTimeout: writeWait, groupWriteDelay: groupWriteDelay, saveWindow: saveWindow,
            saveClock: clock.map { clock in { @Sendable in Self.nanoseconds(clock.now.offset) } },
            beforeContentWrite: beforeContentWrite, beforeStoreWrite: beforeStoreWrite, loadsOnDemand: loadsOnDemand)
        store = try SQLiteMetadataStore(path: directory + "/metadata.sqlite")
        fileSystem = try FolioFileSystem(
            store: store, cache: try ContentCache(directory: FilePath(directory + "/content")),
            configuration: configuration, logger: Logger(label: "test"))
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func remount() throws {
        fileSystem.flushDeferredWrites()
        try reopen()
    }

    /// A new core over what the store holds now, without the group write the old one has pending: as a daemon
    /// killed (`kill -9`) and started again. (Make the harness with a long `groupWriteDelay`, so the old core's
    /// group write does not run meanwhile.)
    func crashAndRestart() throws {
        try reopen()
    }

    private func reopen() throws {
        try store.close()
        store = try SQLiteMetadataStore(path: directory + "/metadata.sqlite")
        fileSystem = try FolioFileSystem(
            store: store, cache: try ContentCache(directory: FilePath(directory + "/content")),
            configuration: configuration, logger: Logger(label: "test"))
    }

    /// Reports `work`, a create, as uploaded with provider version `version`; returns what it created.
    @discardableResult
    func completeCreate(_ work: UploadWork, version: String = "v1") -> RemoteItemTemplate? {
        guard case .create(_, let template, _, _, _) = work else { return nil }
        work.closeContents()
        fileSystem.finishUpload(work, result: .success(RemoteItem(
            id: template.id, container: template.container, parentID: template.parentID, name: template.name,
            kind: template.kind, size: 0, modificationTime: .now(), mode: template.mode, version: version)))
        return template
    }

    /// Writes `path` and reports its create as uploaded at `version`, stored: a clean document on the provider.
    func uploadedDocument(
        _ path: String, _ content: String, version: String = "v1"
    ) async throws -> RemoteItemTemplate {
        try await write(path, content)
        let work = try XCTUnwrap(fileSystem.nextUploadWork(limit: 4).first)
        let template = try XCTUnwrap(completeCreate(work, version: version))
        fileSystem.flushDeferredWrites()
        return template
    }

    /// The provider's description of the file `template` made (at the container's root), at `version`.
    static func remoteFile(
        _ template: RemoteItemTemplate, size: Int64, modificationTime: Timestamp = .now(), version: String
    ) -> RemoteItem {
        RemoteItem(
            id: template.id, container: template.container, parentID: nil, name: template.name, kind: .file,
            size: size, modificationTime: modificationTime, mode: 0o644, version: version)
    }

    static func context(_ process: Int32 = 100) -> RequestContext {
        RequestContext(uid: 0, gid: 0, processID: process)
    }

    func split(_ path: String) throws -> (parent: UInt64, name: String) {
        let components = path.split(separator: "/").map(String.init)
        let parentPath = components.dropLast().joined(separator: "/")
        return (try fileSystem.resolve(path: parentPath), components.last ?? "")
    }

    func ino(_ path: String) throws -> UInt64 { try fileSystem.resolve(path: path) }

    /// Writes a whole file (create or truncate), as one process's session.
    func write(_ path: String, _ content: String, process: Int32 = 100) async throws {
        let handle = try await openForWriting(path, truncate: true, process: process)
        _ = try content.utf8CString.dropLast().withUnsafeBytes {
            try fileSystem.write(handle, offset: 0, bytes: $0)
        }
        try fileSystem.flush(handle, processID: process)
        try fileSystem.release(handle)
    }

    func append(_ path: String, _ content: String, process: Int32 = 100) async throws {
        let ino = try ino(path)
        let opened = try await fileSystem.open(ino, flags: O_WRONLY | O_APPEND, context: Self.context(process))
        _ = try content.utf8CString.dropLast().withUnsafeBytes {
            try fileSystem.write(opened.handle, offset: 0, bytes: $0)
        }
        try fileSystem.release(opened.handle)
    }

    func openForWriting(_ path: String, truncate: Bool, process: Int32 = 100) async throws -> UInt64 {
        let (parent, name) = try split(path)
        if let ino = try? fileSystem.resolve(path: path) {
            let opened = try await fileSystem.open(
                ino, flags: O_WRONLY | (truncate ? O_TRUNC : 0), context: Self.context(process))
            if truncate {
                _ = try await fileSystem.setAttributes(
                    ino, AttributeChanges(size: 0), handle: opened.handle, context: Self.context(process))
            }
            return opened.handle
        }
        return try fileSystem.createFile(
            parent: parent, name: name, permissions: 0o644, flags: O_WRONLY, context: Self.context(process)).1
    }

    func read(_ path: String, process: Int32 = 200) async throws -> String {
        let opened = try await fileSystem.open(try ino(path), flags: O_RDONLY, context: Self.context(process))
        defer { try? fileSystem.release(opened.handle) }
        return try read(handle: opened.handle)
    }

    func read(handle: UInt64) throws -> String {
        let source = try fileSystem.readSource(handle)
        var bytes = [UInt8](repeating: 0, count: Int(source.size))
        let count = bytes.withUnsafeMutableBytes { pread(source.fd, $0.baseAddress, Int(source.size), 0) }
        return String(decoding: bytes.prefix(max(0, count)), as: UTF8.self)
    }

    /// Names in a folder, sorted, without `.` and `..` (and without the root's virtual folders unless asked).
    func list(_ path: String, includingVirtual: Bool = false) throws -> [String] {
        try list(ino: try ino(path), includingVirtual: includingVirtual)
    }

    /// Names in the folder `ino`, sorted, without `.` and `..`.
    func list(ino: UInt64, includingVirtual: Bool = true) throws -> [String] {
        let handle = try fileSystem.openDirectory(ino)
        defer { fileSystem.releaseDirectory(handle) }
        var names: [String] = []
        try fileSystem.readDirectory(handle, offset: 0, limit: 100_000) { entry, _ in
            if !includingVirtual && VirtualFolder.isVirtual(entry.attributes.ino) { return true }
            if entry.name != "." && entry.name != ".." { names.append(entry.name) }
            return true
        }
        return names.sorted()
    }
}
