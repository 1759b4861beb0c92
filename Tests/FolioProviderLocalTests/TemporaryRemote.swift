import FolioCore
import FolioProviderLocal
import Foundation
import SystemPackage

/// A local remote in a fresh temporary directory, with the Drive and a public Notes container; removed by
/// ``remove()`` (call it from `tearDown`).
final class TemporaryRemote: Sendable {
    /// The second container every temporary remote has.
    static let notes = Container(id: ContainerID("com.example.notes"), displayName: "Notes", isPublic: true)

    /// The remote directory.
    let root: FilePath
    /// Whether it is an adopted folder of documents (the Drive is the folder itself).
    let isAdopted: Bool
    /// The documents an adopted remote held before it was adopted (Drive names, sorted).
    static let adoptedDocuments = ["Existing folder", "existing.txt"]

    /// Makes the remote (or only the empty directory, with `initialize: false`); `adopted: true` makes a folder of
    /// documents (``adoptedDocuments``) and adopts it.
    init(initialize: Bool = true, adopted: Bool = false) throws {
        root = FilePath(NSTemporaryDirectory()).appending("folio-provider-test-\(UUID().uuidString)")
        isAdopted = adopted
        if adopted {
            try FileManager.default.createDirectory(
                atPath: root.string + "/Existing folder", withIntermediateDirectories: true)
            try Data("a user's own document\n".utf8).write(to: URL(fileURLWithPath: root.string + "/existing.txt"))
            try Data("inside\n".utf8).write(to: URL(fileURLWithPath: root.string + "/Existing folder/inner.txt"))
            try LocalProvider.adopt(at: root)
            try LocalProvider.addContainer(Self.notes, at: root)
        } else if initialize {
            try LocalProvider.initialize(at: root)
            try LocalProvider.addContainer(Self.notes, at: root)
        } else {
            try FileManager.default.createDirectory(atPath: root.string, withIntermediateDirectories: true)
        }
    }

    /// A provider over this remote.
    func provider(_ simulation: NetworkSimulation = .none) throws -> LocalProvider {
        try LocalProvider(root: root, simulation: simulation)
    }

    /// The absolute path of `relativePath` inside a container's directory.
    func path(_ relativePath: String, in container: ContainerID = .drive) -> String {
        guard isAdopted else { return root.appending(container.rawValue).appending(relativePath).string }
        let folder = container == .drive ? root : root.appending(".folio/containers").appending(container.rawValue)
        return folder.appending(relativePath).string
    }

    /// Writes a file by hand (as a person would), making its folders.
    func writeByHand(_ text: String, to relativePath: String, in container: ContainerID = .drive) throws {
        let path = path(relativePath, in: container)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true
        )
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// A local file holding `text`, to upload.
    func contentFile(_ text: String) throws -> FilePath {
        try contentFile(Array(text.utf8))
    }

    /// A local file holding `bytes`, to upload (outside the remote).
    func contentFile(_ bytes: [UInt8]) throws -> FilePath {
        let path = root.string + "-scratch/" + UUID().uuidString
        try FileManager.default.createDirectory(
            atPath: root.string + "-scratch", withIntermediateDirectories: true
        )
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return FilePath(path)
    }

    /// Where fetched content may be written.
    func destination() throws -> FilePath {
        try FileManager.default.createDirectory(
            atPath: root.string + "-scratch", withIntermediateDirectories: true
        )
        return FilePath(root.string + "-scratch/fetched-" + UUID().uuidString)
    }

    /// A template for an item in a container.
    func template(
        _ name: String, kind: ItemKind = .file, parentID: ItemID? = nil, in container: ContainerID = .drive,
        mode: UInt32 = 0o644, symlinkTarget: String? = nil
    ) -> RemoteItemTemplate {
        RemoteItemTemplate(
            id: .generate(), container: container, parentID: parentID, name: name, kind: kind,
            modificationTime: .now(), mode: mode, symlinkTarget: symlinkTarget
        )
    }

    /// Removes the remote and its scratch directory.
    func remove() {
        try? FileManager.default.removeItem(atPath: root.string)
        try? FileManager.default.removeItem(atPath: root.string + "-scratch")
    }
}
