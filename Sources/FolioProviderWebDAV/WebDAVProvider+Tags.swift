import FolioCore
import Foundation

/// Tags (``RemoteItem/tags``) on a WebDAV server: a dead property of the item, `folio:tags`, a JSON array of
/// strings, so every listing brings them along and a change of them (a `PROPPATCH`, which changes no ETag) is
/// found by the next listing like any change of the item's properties. An update (``TagUpdate``) is merged into
/// the tags the server holds under the item's write lock (``WebDAVLock``): read, merged, written, with no other
/// writer in between on a server that locks. A server that keeps no dead properties (rclone) keeps no tags: its
/// items report `nil` (each device keeps its own), and `folio status` says so (``limitations()``).
extension WebDAVProvider {
    /// The name of the dead property.
    static let tagsProperty = "tags"

    /// The tags in a resource's properties: `nil` where Folio keeps no properties of it (none set, or a server
    /// that keeps none), none if the property is absent or unreadable.
    static func tags(in properties: WebDAVProperties) -> [String]? {
        guard properties.folio["mode"] != nil || properties.folio["id"] != nil else { return nil }
        guard let text = properties.folio[tagsProperty], let data = text.data(using: .utf8),
            let tags = try? JSONDecoder().decode([String].self, from: data)
        else { return [] }
        return tags
    }

    /// The property's value for `tags`.
    static func tagsText(_ tags: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(tags)) ?? Data("[]".utf8), as: UTF8.self)
    }

    /// The value to set for an update of the tags of the resource at `path` (its tags read now, merged), or `nil`
    /// where the server keeps no properties. Called under the resource's write lock.
    func mergedTags(_ update: TagUpdate, at path: String) async throws(FolioError) -> String? {
        guard try await serverTraits().keepsDeadProperties else { return nil }
        let found = try properties(of: path, in: try await propfind(path, depth: 0))
        return Self.tagsText(update.merged(into: Self.tags(in: found) ?? []))
    }
}
