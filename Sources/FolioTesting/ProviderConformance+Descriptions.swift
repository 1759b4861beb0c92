import FolioCore
import Foundation

extension ProviderConformance {
    // MARK: Descriptions

    /// See ``Check/descriptionsPerVersion``.
    func checkDescriptionsPerVersion(_ space: ConformanceWorkspace) async throws {
        var random = SeededRandom(seed: 0xDE5C)
        let file = try await space.createFile("described.png", random.bytes(5000))
        let normal = PNGEncoder.encode(width: 128, height: 64) { x, y in (UInt8(x), UInt8(y), 1) }
        let large = PNGEncoder.encode(width: 256, height: 128) { x, y in (UInt8(x), UInt8(y), 2) }
        let described = ContentDescription(version: file.version, contentType: "image/png", thumbnails: .made)
        try await space.provider.storeDescription(
            described, thumbnails: [.normal: normal, .large: large], of: file.id, in: file.container)
        let unknown = ItemID.generate()
        let found = try await space.provider.descriptions(of: [file.id, unknown], in: space.container)
        try space.expect(found == [file.id: described], "descriptions after a store: \(found)")
        let fetchedNormal = try await space.provider.thumbnail(
            of: file.id, in: file.container, version: file.version, size: .normal)
        try space.expect(fetchedNormal == normal, "the normal thumbnail came back as \(fetchedNormal?.count ?? -1) bytes")
        let fetchedLarge = try await space.provider.thumbnail(
            of: file.id, in: file.container, version: file.version, size: .large)
        try space.expect(fetchedLarge == large, "the large thumbnail came back as \(fetchedLarge?.count ?? -1) bytes")
        let otherVersion = try await space.provider.thumbnail(
            of: file.id, in: file.container, version: file.version + "x", size: .normal)
        try space.expect(otherVersion == nil, "a thumbnail for a version never described")

        // New content: the description kept is of the old version (the caller sees that), no thumbnail of the
        // new one; a description of the old version sent now is dropped.
        let changed = try await space.provider.modifyItem(
            file.id, in: space.container, baseVersion: file.version, changes: RemoteItemChanges(),
            contents: try space.scratchFile(random.bytes(6000)))
        let afterChange = try await space.provider.descriptions(of: [file.id], in: space.container)
        try space.expect(
            afterChange[file.id].map { $0.version != changed.version } ?? true,
            "a description of the new version that nobody made: \(afterChange)")
        let newThumbnail = try await space.provider.thumbnail(
            of: file.id, in: file.container, version: changed.version, size: .normal)
        try space.expect(newThumbnail == nil, "a thumbnail of the new version that nobody made")
        let stale = ContentDescription(version: file.version, contentType: "text/plain", thumbnails: .none)
        try await space.provider.storeDescription(stale, thumbnails: [:], of: file.id, in: file.container)
        let afterStale = try await space.provider.descriptions(of: [file.id], in: space.container)
        try space.expect(afterStale == afterChange, "a description of a version the item is no longer at was kept")

        // The new version's description replaces the old one, thumbnails and all.
        let failed = ContentDescription(version: changed.version, contentType: "image/png", thumbnails: .failed)
        try await space.provider.storeDescription(failed, thumbnails: [:], of: file.id, in: file.container)
        let afterFailed = try await space.provider.descriptions(of: [file.id], in: space.container)
        try space.expect(afterFailed == [file.id: failed], "descriptions after the new version's: \(afterFailed)")
        let oldThumbnail = try await space.provider.thumbnail(
            of: file.id, in: file.container, version: file.version, size: .normal)
        try space.expect(oldThumbnail == nil, "the old version's thumbnail outlived its description")

        // Deleted: nothing is kept.
        try await space.provider.deleteItem(file.id, in: space.container, baseVersion: changed.version)
        let afterDelete = try await space.provider.descriptions(of: [file.id], in: space.container)
        try space.expect(afterDelete.isEmpty, "descriptions of a deleted item: \(afterDelete)")
    }
}
