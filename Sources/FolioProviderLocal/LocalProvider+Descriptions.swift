import FolioCore
import Foundation
import SystemPackage

/// Descriptions (type, thumbnails) of items' content, kept in the provider's state folder beside the documents,
/// never in them: `DIR/.folio/descriptions/<two hex digits>/<id>.json` and `<id>.<size>.png` (the hex digits
/// spread a million items over 256 folders). Each file is replaced atomically; the thumbnails are written before
/// the description that says they are there, so a reader that finds `made` for a version finds its thumbnails
/// (or, rarely, the thumbnails of a newer version, whose version it then sees in the description). They are not
/// flushed to the disk one by one (a crash may lose one, which is made again; it never leaves a part of one).
extension LocalProvider {
    /// Keeps a description and its thumbnails; one of a version the item no longer has is dropped.
    public func storeDescription(
        _ description: ContentDescription, thumbnails: [ThumbnailSize: [UInt8]], of id: ItemID,
        in container: ContainerID
    ) async throws {
        let what = "describe \(id)"
        try await recognizing(what) {
            let current = try await item(id, in: container)
            guard current.kind == .file, current.version == description.version else { return }
            _ = try await admit(what, writes: true)
            let folder = layout.descriptionFolder(of: id)
            try SystemCalls.makeDirectories(folder)
            for size in ThumbnailSize.allCases {
                let path = layout.thumbnail(of: id, size: size)
                if description.thumbnails == .made, let png = thumbnails[size] {
                    try AtomicFile.write(Data(png), to: path, durable: false)
                } else {
                    SystemCalls.removeFileQuietly(path)
                }
            }
            try AtomicFile.write(try JSONEncoder().encode(description), to: layout.description(of: id), durable: false)
        }
        try gate.reply(what)
    }

    /// The descriptions kept for `ids`, in one call.
    public func descriptions(of ids: [ItemID], in container: ContainerID) async throws -> [ItemID: ContentDescription] {
        let what = "descriptions of \(ids.count) items in \(container)"
        let found = try await recognizing(what) {
            _ = try await admit(what)
            var found: [ItemID: ContentDescription] = [:]
            var checked: [FilePath: SpreadFolderIndex.Names?] = [:]
            for id in ids {
                let name = RemoteLayout.fileName(of: id) + ".json"
                guard descriptionFiles.contains(name, in: layout.descriptionFolder(of: id), checked: &checked) != false,
                    let data = SystemCalls.smallFileContents(layout.description(of: id)),
                    let description = try? JSONDecoder().decode(ContentDescription.self, from: Data(data))
                else { continue }
                found[id] = description
            }
            return found
        }
        try gate.reply(what)
        return found
    }

    /// The thumbnail kept for `version`, checked against the description kept with it.
    public func thumbnail(
        of id: ItemID, in container: ContainerID, version: String, size: ThumbnailSize
    ) async throws -> [UInt8]? {
        let what = "thumbnail of \(id)"
        let png: [UInt8]? = try await recognizing(what) {
            _ = try await admit(what)
            guard let data = FileManager.default.contents(atPath: layout.description(of: id).string),
                let description = try? JSONDecoder().decode(ContentDescription.self, from: data),
                description.version == version, description.thumbnails == .made,
                let png = FileManager.default.contents(atPath: layout.thumbnail(of: id, size: size).string)
            else { return nil }
            return [UInt8](png)
        }
        try gate.reply(what)
        return png
    }

    /// Drops what is kept of a deleted item's content.
    func forgetDescription(of id: ItemID) {
        SystemCalls.removeFileQuietly(layout.description(of: id))
        for size in ThumbnailSize.allCases { SystemCalls.removeFileQuietly(layout.thumbnail(of: id, size: size)) }
    }
}

extension RemoteLayout {
    /// Where the descriptions of items' content are.
    var descriptionsDirectory: FilePath { stateDirectory.appending("descriptions") }

    /// The folder of one item's description and thumbnails.
    func descriptionFolder(of id: ItemID) -> FilePath {
        Self.spreadFolder(of: id, in: descriptionsDirectory)
    }

    /// The folder of `directory` (one of 256, named by two hex digits of a hash of the id) that holds `id`'s files:
    /// a million items spread so that no folder holds more than a few thousand.
    static func spreadFolder(of id: ItemID, in directory: FilePath) -> FilePath {
        let spread = String(StableHash.fnv1a(id.rawValue) & 0xFF, radix: 16)
        return directory.appending(spread.count == 1 ? "0" + spread : spread)
    }

    /// One item's description.
    func description(of id: ItemID) -> FilePath {
        descriptionFolder(of: id).appending(Self.fileName(of: id) + ".json")
    }

    /// One item's thumbnail of `size`.
    func thumbnail(of id: ItemID, size: ThumbnailSize) -> FilePath {
        descriptionFolder(of: id).appending(Self.fileName(of: id) + "." + size.rawValue + ".png")
    }

    /// A file name for an id: the id itself when it is made of letters, digits, `-` and `_` (as Folio's are),
    /// otherwise its bytes in hex.
    static func fileName(of id: ItemID) -> String {
        let plain = id.rawValue.utf8.allSatisfy { byte in
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 45
                || byte == 95
        }
        if plain && !id.rawValue.isEmpty && id.rawValue.utf8.count <= 200 { return id.rawValue }
        return "x" + id.rawValue.utf8.prefix(100).map { String(format: "%02x", $0) }.joined()
    }
}
