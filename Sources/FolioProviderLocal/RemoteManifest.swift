import FolioCore
import Foundation
import SystemPackage

/// The manifest of a local remote, `DIR/.folio-remote.json`:
/// `{"remoteId":"…","containers":[{"id":"com.example.notes","displayName":"Notes","public":true}]}`.
///
/// It holds what a directory cannot: the remote's identity, display names and visibility. A top-level directory
/// without an entry is a public container whose display name is its id.
struct RemoteManifest: Codable, Hashable, Sendable {
    /// One container's entry.
    struct Entry: Codable, Hashable, Sendable {
        /// The container id (also its directory name).
        var id: String
        /// The display name.
        var displayName: String
        /// Public or private.
        var isPublic: Bool

        private enum CodingKeys: String, CodingKey {
            case id
            case displayName
            case isPublic = "public"
        }

        /// The entry of a container.
        init(_ container: Container) {
            id = container.id.rawValue
            displayName = container.displayName
            isPublic = container.isPublic
        }

        /// The container this entry describes.
        var container: Container { Container(id: ContainerID(id), displayName: displayName, isPublic: isPublic) }
    }

    /// The identity of the remote, made when it was made (or when a provider first opened a remote from before
    /// identities): a folder without it, or with another, is not this remote (``RemoteIdentity``).
    var remoteID: String?
    /// The entries, in the order they were added.
    var containers: [Entry] = []

    private enum CodingKeys: String, CodingKey {
        case remoteID = "remoteId"
        case containers
    }

    /// Reads the manifest at `path`, or `nil` if there is none.
    static func load(from path: FilePath) throws -> RemoteManifest? {
        guard let data = FileManager.default.contents(atPath: path.string) else {
            if try SystemCalls.statusIfPresent(path) == nil { return nil }
            throw FolioError.io("cannot read \(path)")
        }
        do {
            return try JSONDecoder().decode(RemoteManifest.self, from: data)
        } catch {
            throw FolioError.invalidArgument("malformed remote manifest \(path): \(error)")
        }
    }

    /// Writes the manifest atomically (a temporary file renamed over the old one).
    func save(to path: FilePath) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(self)
        try AtomicFile.write(data, to: path)
    }

    /// Adds or replaces the entry of `container`.
    mutating func upsert(_ container: Container) {
        if let index = containers.firstIndex(where: { $0.id == container.id.rawValue }) {
            containers[index] = Entry(container)
        } else {
            containers.append(Entry(container))
        }
    }

    /// The entry for a container id, if any.
    func entry(for id: ContainerID) -> Entry? { containers.first { $0.id == id.rawValue } }
}
