import FolioCore
import Foundation

/// Descriptions of content (type, thumbnails) on a WebDAV server: the description is a small dead property of the
/// file (`folio:description`, JSON), so every listing brings it along; the thumbnails, too big for listings (which
/// ask for all properties), are resources of a hidden collection beside the containers,
/// `.folio-thumbnails/<id hash>-<version hash>.<size>.png`, named by the version they show, so a stale one is never
/// taken for a newer version's. A server that keeps no properties keeps no descriptions (`.notSupported`).
extension WebDAVProvider {
    /// The hidden collection of thumbnails, beside the containers.
    static let thumbnailCollection = ".folio-thumbnails"

    /// Keeps a description (and its thumbnails, written first) on the file, if it is still at that version;
    /// the thumbnails of the version described before are removed.
    public func storeDescription(
        _ description: ContentDescription, thumbnails: [ThumbnailSize: [UInt8]], of id: ItemID,
        in container: ContainerID
    ) async throws {
        guard try await serverTraits().keepsDeadProperties else {
            throw FolioError.notSupported("the server keeps no properties: types and thumbnails stay on this device")
        }
        guard let entry = try await settledEntry(id), entry.container == container, !entry.isFolder else { return }
        let itemPath = path(try components(of: entry.parent, in: container) + [entry.name], in: container, folder: false)
        guard let listing = try await existing(itemPath, depth: 0) else { return }
        let properties = try self.properties(of: itemPath, in: listing)
        let now = remoteItem(
            properties, name: entry.name, parent: entry.parent ?? .root(of: container),
            components: try components(of: entry.parent, in: container), container: container)
        guard now.id == id, now.kind == .file, now.version == description.version else { return }
        if description.thumbnails == .made {
            let collection = client.configuration.basePath + Self.thumbnailCollection + "/"
            let made = try await client.send("MKCOL", collection)
            guard WebDAVStatus.succeeded(made.status) || made.status == 405 else {
                throw WebDAVStatus.error(made.status, "MKCOL \(collection)")
            }
            for size in ThumbnailSize.allCases {
                guard let png = thumbnails[size] else { continue }
                let target = thumbnailPath(of: id, version: description.version, size: size)
                let reply = try await client.send("PUT", target, body: .bytes(Data(png)))
                guard WebDAVStatus.succeeded(reply.status) else { throw WebDAVStatus.error(reply.status, "PUT \(target)") }
            }
        }
        let encoded = String(decoding: try JSONEncoder().encode(description), as: UTF8.self)
        guard try await setProperties(["description": encoded], at: itemPath) else {
            throw FolioError.notSupported("the server refuses Folio's properties: types and thumbnails stay on this device")
        }
        if let earlier = Self.description(in: properties), earlier.version != description.version {
            await removeThumbnails(of: id, version: earlier.version)
        }
    }

    /// The descriptions of `ids`, read fresh from the server: one `PROPFIND Depth: 1` per folder they are in.
    public func descriptions(of ids: [ItemID], in container: ContainerID) async throws -> [ItemID: ContentDescription] {
        var byFolder: [ItemID?: [ItemID]] = [:]
        for id in ids {
            guard let entry = index.entry(id), entry.container == container, !entry.isFolder else { continue }
            byFolder[entry.parent, default: []].append(id)
        }
        var found: [ItemID: ContentDescription] = [:]
        for (folder, wanted) in byFolder {
            let described = try await descriptions(in: folder ?? .root(of: container), of: Set(wanted), container: container)
            found.merge(described) { first, _ in first }
        }
        return found
    }

    /// The descriptions of the members `wanted` of one folder (none if the folder is gone).
    private func descriptions(
        in folder: ItemID, of wanted: Set<ItemID>, container: ContainerID
    ) async throws -> [ItemID: ContentDescription] {
        let components = try components(of: folder, in: container)
        let folderPath = path(components, in: container, folder: true)
        let listing: WebDAVMultistatus
        do {
            listing = try await propfind(folderPath, depth: 1)
        } catch {
            if case .notFound = error { return [:] }
            throw error
        }
        let hrefs = WebDAVHref.Listing(URL(string: client.configuration.url(folderPath))!)
        var found: [ItemID: ContentDescription] = [:]
        for response in listing.responses {
            guard let description = Self.description(in: response.properties) else { continue }
            let href = try hrefs.href(response.href)
            guard case .member(let name) = href else { continue }
            let item = remoteItem(
                response.properties, name: name, parent: folder, components: components, container: container)
            if wanted.contains(item.id) { found[item.id] = description }
        }
        return found
    }

    /// The thumbnail of `size` of version `version`; `nil` if there is none.
    public func thumbnail(
        of id: ItemID, in container: ContainerID, version: String, size: ThumbnailSize
    ) async throws -> [UInt8]? {
        let target = thumbnailPath(of: id, version: version, size: size)
        let reply = try await client.send("GET", target, limit: 4 << 20)
        if reply.status == 404 || reply.status == 410 { return nil }
        guard WebDAVStatus.succeeded(reply.status) else { throw WebDAVStatus.error(reply.status, "GET \(target)") }
        return [UInt8](reply.body)
    }

    /// Removes the thumbnails of one version (best effort: a leftover costs space, never a wrong thumbnail).
    func removeThumbnails(of id: ItemID, version: String) async {
        for size in ThumbnailSize.allCases {
            _ = try? await client.send("DELETE", thumbnailPath(of: id, version: version, size: size))
        }
    }

    /// Where the thumbnail of `size` of version `version` of an item is.
    func thumbnailPath(of id: ItemID, version: String, size: ThumbnailSize) -> String {
        let name = String(StableHash.fnv1a(id.rawValue), radix: 16) + "-" + String(StableHash.fnv1a(version), radix: 16)
        return client.configuration.basePath + Self.thumbnailCollection + "/" + name + "." + size.rawValue + ".png"
    }

    /// The description a resource's `folio:description` property holds.
    static func description(in properties: WebDAVProperties) -> ContentDescription? {
        properties.folio["description"].flatMap { try? JSONDecoder().decode(ContentDescription.self, from: Data($0.utf8)) }
    }
}
