import FolioCore
import Foundation
import SystemPackage

/// One conformance check's playground: a uniquely named folder on the provider (so checks never see each
/// other's items, and the remote need not be empty), a local scratch directory for content files, and the
/// helpers the checks share.
struct ConformanceWorkspace: Sendable {
    /// The check this workspace belongs to (named in failures).
    let check: String
    /// The provider under test.
    let provider: any Provider
    /// The container the workspace folder is in.
    let container: ContainerID
    /// The workspace folder.
    let folder: RemoteItem
    /// A local directory for content files.
    let scratch: FilePath

    /// A modification time with nanoseconds, to see whether a provider keeps it.
    static let sampleTime = Timestamp(seconds: 1_714_564_800, nanoseconds: 123_456_789)

    /// Creates the workspace folder and the scratch directory.
    static func make(check: String, provider: any Provider, container: ContainerID) async throws -> Self {
        let scratch = FilePath(NSTemporaryDirectory()).appending("folio-conformance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: scratch.string, withIntermediateDirectories: true)
        let name = "conformance-\(check)-\(UUID().uuidString.prefix(8))"
        let template = RemoteItemTemplate(
            id: .generate(), container: container, parentID: nil, name: name, kind: .directory,
            modificationTime: sampleTime, mode: 0o755
        )
        let folder = try await provider.createItem(template, contents: nil)
        return Self(check: check, provider: provider, container: container, folder: folder, scratch: scratch)
    }

    // MARK: Expectations

    /// A failure of this workspace's check.
    func failure(_ message: String) -> ConformanceFailure { ConformanceFailure(check: check, message: message) }

    /// Fails the check with `message` unless `condition` holds.
    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw failure(message()) }
    }

    /// Fails the check unless `body` throws a ``FolioError`` of the `expected` kind.
    func expectError(
        _ expected: ExpectedError, _ what: String, _ body: () async throws -> Void
    ) async throws {
        do {
            try await body()
        } catch let error as FolioError {
            try expect(expected.matches(error), "\(what): expected .\(expected.rawValue), got \(error)")
            return
        } catch let error as ConformanceFailure {
            throw error
        } catch {
            throw failure("\(what): expected FolioError.\(expected.rawValue), got \(type(of: error)): \(error)")
        }
        throw failure("\(what): expected .\(expected.rawValue), but it succeeded")
    }

    // MARK: Making items

    /// A template in this workspace's container, by default in the workspace folder.
    func template(
        _ name: String, kind: ItemKind = .file, parentID: ItemID?? = nil, id: ItemID = .generate(),
        mode: UInt32? = nil, symlinkTarget: String? = nil, container: ContainerID? = nil
    ) -> RemoteItemTemplate {
        RemoteItemTemplate(
            id: id, container: container ?? self.container, parentID: parentID ?? folder.id, name: name, kind: kind,
            modificationTime: Self.sampleTime, mode: mode ?? (kind == .directory ? 0o755 : 0o644),
            symlinkTarget: symlinkTarget
        )
    }

    /// Writes `bytes` to a new local file and returns its path.
    func scratchFile(_ bytes: [UInt8]) throws -> FilePath {
        let path = scratch.appending("content-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: path.string, contents: Data(bytes)) else {
            throw failure("cannot write scratch file \(path)")
        }
        return path
    }

    /// Creates a file with `bytes`, by default in the workspace folder.
    func createFile(_ name: String, _ bytes: [UInt8], parentID: ItemID?? = nil) async throws -> RemoteItem {
        try await provider.createItem(template(name, parentID: parentID), contents: try scratchFile(bytes))
    }

    /// Creates a folder, by default in the workspace folder.
    func createFolder(_ name: String, parentID: ItemID?? = nil) async throws -> RemoteItem {
        try await provider.createItem(template(name, kind: .directory, parentID: parentID), contents: nil)
    }

    // MARK: Reading

    /// Fetches an item's content and returns it with the progress values reported.
    func fetch(
        _ item: RemoteItem, version: String? = nil, using provider: (any Provider)? = nil
    ) async throws -> (bytes: [UInt8], progress: [Int64], item: RemoteItem) {
        let destination = scratch.appending("fetched-\(UUID().uuidString)")
        let recorder = ProgressRecorder()
        let fetched = try await (provider ?? self.provider).fetchContents(
            of: item.id, in: item.container, version: version ?? item.version, to: destination,
            progress: { recorder.record($0) }
        )
        guard let data = FileManager.default.contents(atPath: destination.string) else {
            throw failure("fetch of \(item.name) left no file at \(destination)")
        }
        try? FileManager.default.removeItem(atPath: destination.string)
        return ([UInt8](data), recorder.values, fetched)
    }

    /// The items of `container` (by default this workspace's) that are below the workspace folder, by id, or
    /// everything in that container when `wholeContainer` is set.
    func items(in container: ContainerID? = nil, wholeContainer: Bool = false) async throws -> [ItemID: RemoteItem] {
        let (all, _) = try await provider.enumerateSubtree(in: container ?? self.container)
        var byID: [ItemID: RemoteItem] = [:]
        for item in all {
            try expect(byID[item.id] == nil, "enumeration lists id \(item.id) twice")
            byID[item.id] = item
        }
        if wholeContainer { return byID }
        return byID.filter { isBelowWorkspace($0.value, in: byID) }
    }

    /// Whether `item` lies below the workspace folder.
    private func isBelowWorkspace(_ item: RemoteItem, in items: [ItemID: RemoteItem]) -> Bool {
        var parent = item.parentID
        var steps = 0
        while let current = parent, steps <= items.count {
            if current == folder.id { return true }
            parent = items[current]?.parentID
            steps += 1
        }
        return false
    }

    // MARK: Cleaning up

    /// Deletes the workspace folder and everything in it, and the scratch directory; best effort.
    func cleanUp() async {
        if let items = try? await items() {
            let depth: (RemoteItem) -> Int = { item in
                var count = 0
                var parent = item.parentID
                while let current = parent, count <= items.count {
                    count += 1
                    parent = items[current]?.parentID
                }
                return count
            }
            for item in items.values.sorted(by: { depth($0) > depth($1) }) {
                try? await provider.deleteItem(item.id, in: item.container, baseVersion: nil)
            }
        }
        try? await provider.deleteItem(folder.id, in: container, baseVersion: nil)
        removeScratch()
    }

    /// Removes the local scratch directory.
    func removeScratch() {
        try? FileManager.default.removeItem(atPath: scratch.string)
    }
}
