import FolioCore
import Foundation

extension ProviderConformance {
    // MARK: Tags

    /// See ``Check/tagsTravelWithMetadata``.
    func checkTagsTravelWithMetadata(_ space: ConformanceWorkspace) async throws {
        var random = SeededRandom(seed: 0x7A65)
        let original = random.bytes(3000)
        let file = try await space.createFile("tagged.txt", original)
        let folder = try await space.createFolder("tagged folder")
        try space.expect(file.tags == [], "a new file's tags: \(String(describing: file.tags)), not none")
        let anchor = try await space.provider.currentAnchor(in: space.container)

        // A tag update is metadata only: the version and the content stay.
        func update(_ item: RemoteItem, base: [String]?, _ tags: [String], at version: String? = nil) async throws
            -> RemoteItem
        {
            try await space.provider.modifyItem(
                item.id, in: space.container, baseVersion: version ?? item.version,
                changes: RemoteItemChanges(tags: TagUpdate(base: base, tags: tags)), contents: nil)
        }
        let tagged = try await update(file, base: [], ["red", "work"])
        try space.expect(Set(tagged.tags ?? []) == ["red", "work"], "tags after an update: \(tagged.tags ?? [])")
        try space.expect(tagged.version == file.version, "a tag update made a new version (\(tagged.version))")
        try space.expect(!tagged.changedElsewhere, "a tag update at the current version said changed elsewhere")
        let fetched = try await space.fetch(tagged)
        try space.expect(fetched.bytes == original, "a tag update changed the content")
        let taggedFolder = try await update(folder, base: nil, ["projects"])
        try space.expect(taggedFolder.tags == ["projects"], "a folder's tags: \(String(describing: taggedFolder.tags))")

        // Reported by changes since an anchor, by an enumeration and by a lookup.
        var reported: [ItemID: RemoteItem] = [:]
        var from = anchor
        while true {
            let changes = try await space.provider.changes(in: space.container, since: from)
            for item in changes.updated { reported[item.id] = item }
            from = changes.anchor
            if !changes.moreComing { break }
        }
        try space.expect(
            Set(reported[file.id]?.tags ?? []) == ["red", "work"],
            "changes since the anchor report the file's tags as \(String(describing: reported[file.id]?.tags))")
        try space.expect(reported[folder.id]?.tags == ["projects"], "changes report the folder's tags wrongly")
        let listed = try await space.items()
        try space.expect(Set(listed[file.id]?.tags ?? []) == ["red", "work"], "an enumeration lists other tags")
        let looked = try await space.provider.item(file.id, in: space.container)
        try space.expect(Set(looked.tags ?? []) == ["red", "work"], "a lookup gives other tags")

        // Merged, never overwritten: another device that never saw red and work adds blue; then one removes work.
        let union = try await update(file, base: [], ["blue"])
        try space.expect(
            Set(union.tags ?? []) == ["red", "work", "blue"], "a concurrent update lost tags: \(union.tags ?? [])")
        let removed = try await update(file, base: ["red", "work", "blue"], ["red", "blue"])
        try space.expect(Set(removed.tags ?? []) == ["red", "blue"], "a removal gave \(removed.tags ?? [])")

        // A content change leaves the tags; a tag update on a stale base leaves the content (and says so).
        let changed = try await space.provider.modifyItem(
            file.id, in: space.container, baseVersion: removed.version, changes: RemoteItemChanges(),
            contents: try space.scratchFile(random.bytes(4000)))
        try space.expect(changed.version != file.version, "new content kept the version")
        try space.expect(
            Set(changed.tags ?? []) == ["red", "blue"], "a content change changed the tags: \(changed.tags ?? [])")
        let changedBytes = try await space.fetch(changed).bytes
        let stale = try await update(file, base: ["red", "blue"], ["red", "blue", "late"], at: file.version)
        try space.expect(stale.changedElsewhere, "a tag update on a stale base did not say changed elsewhere")
        try space.expect(
            Set(stale.tags ?? []) == ["red", "blue", "late"], "a stale-base tag update gave \(stale.tags ?? [])")
        let now = try await space.provider.item(file.id, in: space.container)
        try space.expect(now.version == changed.version, "a tag update on a stale base changed the version")
        let afterBytes = try await space.fetch(now).bytes
        try space.expect(afterBytes == changedBytes, "a tag update on a stale base changed the content")
    }
}
