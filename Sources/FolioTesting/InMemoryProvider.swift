import FolioCore
import Foundation
import Synchronization
import SystemPackage

/// A provider whose remote lives in memory (DESIGN.md §3, FolioTesting: in-memory and fault-injecting
/// providers; §4 example 10, mountpoint-s3's `mock_client` and `failure_client` in one): it passes the provider
/// conformance suite, so the core and the sync services can be tested against it without a disk or a server,
/// and a test can
///
/// - act as another device on the same remote (``create(_:bytes:)``, ``modify(_:in:baseVersion:changes:bytes:)``,
///   ``delete(_:in:baseVersion:retryTag:)``: synchronous, never faulted),
/// - look at what the remote holds (``items(in:)``, ``content(of:in:)``) and at the bytes of any version it ever
///   held (``content(ofVersion:)``),
/// - make calls fail (``inject(_:on:)``: before the remote changes, or after, with the answer lost) or the whole
///   remote unreachable (``isOffline``), and expire anchors (``expireAnchors(in:)``).
///
/// Versions are `m1`, `m2`, … for files (a new one for every content change, none for a metadata change),
/// `d…` for folders and `s…` for symlinks (never changing). Anchors name the remote (``remoteID``) and a position
/// in its history; an anchor of another remote is expired.
public final class InMemoryProvider: Provider {
    /// The calls a fault can be injected into.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case listContainers, createContainer, currentAnchor, enumerateFolder, changes, fetchContents, item
        case createItem, modifyItem, deleteItem, storeDescription, descriptions, thumbnail
    }

    /// A failure injected into one call (``inject(_:on:)``).
    public enum Fault: Sendable, Equatable {
        /// The call fails with the error, and the remote does not change.
        case before(FolioError)
        /// The call is made, then its answer is lost: the caller gets the error although the remote changed (a
        /// connection dropped after the server acted, a daemon killed while it waited).
        case afterApplying(FolioError)
    }

    /// The remote.
    private let remote: Mutex<InMemoryRemote>
    /// Faults waiting for their call, in order per operation.
    private let faults = Mutex<[Operation: [Fault]]>([:])
    /// Calls made so far, per operation.
    private let counts = Mutex<[Operation: Int]>([:])
    /// Whether every call fails `.offline`.
    private let offline = Atomic<Bool>(false)
    /// This remote's name in its anchors.
    public let remoteID: String
    /// The most items one answer of ``changes(in:since:)`` holds (then ``RemoteChanges/moreComing``).
    public let changesPerAnswer: Int

    /// An empty remote with the Drive container and `containers`; `changesPerAnswer` items at most in each
    /// answer of ``changes(in:since:)``.
    public init(containers: [Container] = [], changesPerAnswer: Int = 1000) {
        remote = Mutex(InMemoryRemote(containers: containers))
        remoteID = String(UUID().uuidString.prefix(8)).lowercased()
        self.changesPerAnswer = changesPerAnswer
    }

    // MARK: Faults

    /// Makes the next call of `operation` (after the faults queued before for it) fail as `fault` says.
    public func inject(_ fault: Fault, on operation: Operation) {
        faults.withLock { $0[operation, default: []].append(fault) }
    }

    /// Drops the faults not taken yet.
    public func clearFaults() {
        faults.withLock { $0.removeAll() }
    }

    /// Whether every call fails with `.offline` (the remote cannot be reached).
    public var isOffline: Bool {
        get { offline.load(ordering: .relaxed) }
        set { offline.store(newValue, ordering: .relaxed) }
    }

    /// How many calls of `operation` were made.
    public func callCount(_ operation: Operation) -> Int {
        counts.withLock { $0[operation] ?? 0 }
    }

    /// Runs one call of `operation`: counts it, takes its fault, and runs `body` on the remote under the lock
    /// (unless the fault comes first).
    private func call<T: Sendable>(
        _ operation: Operation, _ body: (inout InMemoryRemote) throws(FolioError) -> T
    ) throws(FolioError) -> T {
        counts.withLock { $0[operation, default: 0] += 1 }
        if isOffline { throw .offline("the in-memory remote \(remoteID) is offline") }
        let fault = faults.withLock { faults -> Fault? in
            guard var queue = faults[operation], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            faults[operation] = queue
            return first
        }
        if case .before(let error) = fault { throw error }
        let result = try remote.withLock { remote throws(FolioError) -> Result<T, FolioError> in
            do throws(FolioError) { return .success(try body(&remote)) } catch { return .failure(error) }
        }.get()
        if case .afterApplying(let error) = fault { throw error }
        return result
    }

    // MARK: Another device

    /// Creates an item holding `bytes` (for a file), as another device would; no fault applies.
    @discardableResult
    public func create(_ template: RemoteItemTemplate, bytes: [UInt8]?) throws(FolioError) -> RemoteItem {
        try remote.withLock { remote throws(FolioError) in try remote.create(template, content: bytes) }
    }

    /// Changes an item (and its content to `bytes`, if given), as another device would; no fault applies.
    @discardableResult
    public func modify(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges, bytes: [UInt8]?
    ) throws(FolioError) -> RemoteItem {
        try remote.withLock { remote throws(FolioError) in
            try remote.modify(id, in: container, baseVersion: baseVersion, changes: changes, content: bytes)
        }
    }

    /// Deletes an item, as another device would; no fault applies.
    public func delete(
        _ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String? = nil
    ) throws(FolioError) {
        try remote.withLock { remote throws(FolioError) in
            try remote.delete(id, in: container, baseVersion: baseVersion, retryTag: retryTag)
        }
    }

    // MARK: Looking at the remote

    /// Every item of `container`, as the remote has it now.
    public func items(in container: ContainerID = .drive) -> [RemoteItem] {
        remote.withLock { $0.spaces[container]?.entries.values.map(\.item) ?? [] }
    }

    /// The bytes a file has now; `nil` if the container has no such file.
    public func content(of id: ItemID, in container: ContainerID = .drive) -> [UInt8]? {
        remote.withLock { remote in
            remote.spaces[container]?.entries[id].flatMap { $0.item.kind == .file ? $0.content : nil }
        }
    }

    /// The bytes of a file version the remote ever held (``RemoteItem/version``); `nil` for a version it never
    /// had.
    public func content(ofVersion version: String) -> [UInt8]? {
        remote.withLock { $0.versions[version] }
    }

    /// Trims the history of `container`: every anchor taken before now is expired.
    public func expireAnchors(in container: ContainerID) {
        remote.withLock { $0.expireAnchors(in: container) }
    }

    // MARK: Provider

    public func listContainers() async throws -> [Container] {
        try call(.listContainers) { remote in remote.spaces.values.map(\.container).sorted { $0.id < $1.id } }
    }

    public func createContainer(_ container: Container) async throws -> Container {
        try call(.createContainer) { remote in
            if let existing = remote.spaces[container.id] { return existing.container }
            remote.spaces[container.id] = InMemoryRemote.Space(container: container)
            return container
        }
    }

    public func currentAnchor(in container: ContainerID) async throws -> SyncAnchor {
        try call(.currentAnchor) { [remoteID] remote throws(FolioError) in
            _ = try remote.space(container)
            return InMemoryRemote.anchor(remoteID, remote.position)
        }
    }

    public func enumerateFolder(
        _ folder: ItemID?, in container: ContainerID, from cursor: PageCursor?, pageSize: Int
    ) async throws -> FolderPage {
        try call(.enumerateFolder) { remote throws(FolioError) in
            try remote.page(of: folder, in: container, from: cursor, pageSize: pageSize)
        }
    }

    public func changes(in container: ContainerID, since anchor: SyncAnchor) async throws -> RemoteChanges {
        try call(.changes) { [remoteID, changesPerAnswer] remote throws(FolioError) in
            try remote.changes(in: container, since: anchor, remote: remoteID, limit: changesPerAnswer)
        }
    }

    public func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        let (item, bytes) = try fetch(id, in: container, version: version)
        try Self.write(bytes, to: destination, at: 0, truncating: true, progress: progress)
        return item
    }

    public func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, range: Range<Int64>, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        let (item, bytes) = try fetch(id, in: container, version: version)
        let lower = min(max(0, range.lowerBound), Int64(bytes.count))
        let upper = min(max(lower, range.upperBound), Int64(bytes.count))
        try Self.write(
            Array(bytes[Int(lower)..<Int(upper)]), to: destination, at: lower, truncating: false, progress: progress)
        return item
    }

    /// The item and its bytes, if it is a file at `version`.
    private func fetch(
        _ id: ItemID, in container: ContainerID, version: String
    ) throws(FolioError) -> (RemoteItem, [UInt8]) {
        try call(.fetchContents) { remote throws(FolioError) in
            guard let entry = remote.spaces[container]?.entries[id] else {
                throw .notFound("item \(id) in \(container)")
            }
            guard entry.item.kind == .file else { throw .isDirectory("\(entry.item.name) (\(id)) has no content") }
            guard entry.item.version == version else {
                throw .conflict("\(entry.item.name) (\(id)) is at version \(entry.item.version), not \(version)")
            }
            return (entry.item, entry.content)
        }
    }

    public func item(_ id: ItemID, in container: ContainerID) async throws -> RemoteItem {
        try call(.item) { remote throws(FolioError) in
            guard let entry = remote.spaces[container]?.entries[id] else {
                throw .notFound("item \(id) in \(container)")
            }
            return entry.item
        }
    }

    public func createItem(_ template: RemoteItemTemplate, contents: FilePath?) async throws -> RemoteItem {
        let bytes = try contents.map { path throws(FolioError) in try Self.read(path) }
        return try call(.createItem) { remote throws(FolioError) in try remote.create(template, content: bytes) }
    }

    public func modifyItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?
    ) async throws -> RemoteItem {
        let bytes = try contents.map { path throws(FolioError) in try Self.read(path) }
        return try call(.modifyItem) { remote throws(FolioError) in
            try remote.modify(id, in: container, baseVersion: baseVersion, changes: changes, content: bytes)
        }
    }

    public func deleteItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?
    ) async throws {
        try call(.deleteItem) { remote throws(FolioError) in
            try remote.delete(id, in: container, baseVersion: baseVersion, retryTag: retryTag)
        }
    }

    public func storeDescription(
        _ description: ContentDescription, thumbnails: [ThumbnailSize: [UInt8]], of id: ItemID,
        in container: ContainerID
    ) async throws {
        try call(.storeDescription) { remote in
            remote.store(description, thumbnails: thumbnails, of: id, in: container)
        }
    }

    public func descriptions(of ids: [ItemID], in container: ContainerID) async throws -> [ItemID: ContentDescription] {
        try call(.descriptions) { remote in
            var found: [ItemID: ContentDescription] = [:]
            for id in ids {
                if let description = remote.spaces[container]?.entries[id]?.description { found[id] = description }
            }
            return found
        }
    }

    public func thumbnail(
        of id: ItemID, in container: ContainerID, version: String, size: ThumbnailSize
    ) async throws -> [UInt8]? {
        try call(.thumbnail) { remote in
            guard let entry = remote.spaces[container]?.entries[id], entry.description?.version == version else {
                return nil
            }
            return entry.thumbnails[size]
        }
    }

    // MARK: Files

    /// The bytes of a local file (an upload's content).
    private static func read(_ path: FilePath) throws(FolioError) -> [UInt8] {
        do {
            let descriptor = try FileDescriptor.open(path, .readOnly)
            defer { try? descriptor.close() }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                if count == 0 { return bytes }
                bytes += chunk[..<count]
            }
        } catch {
            throw .io("cannot read \(path): \(error)")
        }
    }

    /// Writes `bytes` into `destination` at `offset` (created if missing; emptied first if `truncating`),
    /// reporting the bytes written so far after each piece.
    private static func write(
        _ bytes: [UInt8], to destination: FilePath, at offset: Int64, truncating: Bool,
        progress: @Sendable (Int64) -> Void
    ) throws(FolioError) {
        do {
            let descriptor = try FileDescriptor.open(
                destination, .writeOnly, options: truncating ? [.create, .truncate] : [.create],
                permissions: [.ownerReadWrite])
            defer { try? descriptor.close() }
            let piece = 1 << 20
            var written = 0
            repeat {
                let end = min(bytes.count, written + piece)
                _ = try descriptor.writeAll(toAbsoluteOffset: offset + Int64(written), bytes[written..<end])
                written = end
                progress(Int64(written))
            } while written < bytes.count
        } catch {
            throw .io("cannot write \(destination): \(error)")
        }
    }
}
