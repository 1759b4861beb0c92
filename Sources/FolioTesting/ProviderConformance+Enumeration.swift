import FolioCore

extension ProviderConformance {
    // MARK: Paging

    /// See ``Check/enumerationPages``.
    func checkEnumerationPages(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        var created: [RemoteItem] = []
        for name in ["e.txt", "a.txt", "c.txt", "b.txt", "d.txt"] {
            created.append(try await space.createFile(name, Array(name.utf8)))
        }
        let folder = try await space.createFolder("f folder")
        created.append(folder)
        let nested = try await space.createFile("nested.txt", Array("n".utf8), parentID: folder.id)
        for pageSize in [1, 2, 1000] {
            let pages = try await allPages(of: space.folder.id, pageSize: pageSize, space)
            let listed = pages.flatMap(\.items)
            try space.expect(
                listed.map(\.id).sorted { $0.rawValue < $1.rawValue }
                    == created.map(\.id).sorted { $0.rawValue < $1.rawValue },
                "pages of \(pageSize) list \(listed.map(\.name)), expected each of \(created.map(\.name)) once")
            for (number, page) in pages.enumerated() {
                try space.expect(page.items.count <= pageSize, "a page of \(pageSize) holds \(page.items.count)")
                let isLast = number == pages.count - 1
                try space.expect(isLast || !page.items.isEmpty, "page \(number + 1) of \(pages.count) is empty")
            }
            for item in listed {
                let original = created.first { $0.id == item.id }
                try space.expect(
                    item.parentID == space.folder.id && item.name == original?.name
                        && item.version == original?.version && item.kind == original?.kind,
                    "a page describes \(item.name) as \(item), create said \(String(describing: original))")
            }
        }
        let inside = try await provider.enumerateWholeFolder(folder.id, in: space.container)
        try space.expect(inside.map(\.id) == [nested.id], "the subfolder lists \(inside.map(\.name))")
        try await space.expectError(.notDirectory, "listing a file") {
            _ = try await provider.enumerateFolder(created[0].id, in: space.container, from: nil, pageSize: 10)
        }
        try await space.expectError(.notFound, "listing a folder that does not exist") {
            _ = try await provider.enumerateFolder(.generate(), in: space.container, from: nil, pageSize: 10)
        }
        try await provider.deleteItem(nested.id, in: space.container, baseVersion: nested.version)
        try await provider.deleteItem(folder.id, in: space.container, baseVersion: nil)
        try await space.expectError(.notFound, "listing a deleted folder") {
            _ = try await provider.enumerateFolder(folder.id, in: space.container, from: nil, pageSize: 10)
        }
    }

    /// Every page of a folder, in order.
    private func allPages(
        of folder: ItemID, pageSize: Int, _ space: ConformanceWorkspace
    ) async throws -> [FolderPage] {
        var pages: [FolderPage] = []
        var cursor: PageCursor?
        repeat {
            let page = try await space.provider.enumerateFolder(
                folder, in: space.container, from: cursor, pageSize: pageSize)
            pages.append(page)
            cursor = page.next
            try space.expect(pages.count <= 10_000, "a folder of a few items gives pages without end")
        } while cursor != nil
        return pages
    }

    /// All changes since `anchor` (calling again while more are coming), merged: the last word on each id.
    func allChanges(
        since anchor: SyncAnchor, _ space: ConformanceWorkspace, using provider: (any Provider)? = nil
    ) async throws -> (updated: [ItemID: RemoteItem], deleted: Set<ItemID>, anchor: SyncAnchor) {
        let provider = provider ?? space.provider
        var updated: [ItemID: RemoteItem] = [:]
        var deleted: Set<ItemID> = []
        var anchor = anchor
        for _ in 0..<10_000 {
            let changes = try await provider.changes(in: space.container, since: anchor)
            try space.expect(!changes.isFullEnumeration || !changes.moreComing, "a full enumeration with more coming")
            for item in changes.updated {
                updated[item.id] = item
                deleted.remove(item.id)
            }
            for id in changes.deleted {
                deleted.insert(id)
                updated[id] = nil
            }
            anchor = changes.anchor
            if !changes.moreComing { return (updated, deleted, anchor) }
        }
        throw space.failure("changes keep coming without end")
    }

    // MARK: Changes during a paged enumeration

    /// See ``Check/changeDuringPagedEnumeration``.
    func checkChangeDuringPagedEnumeration(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        var files: [String: RemoteItem] = [:]
        for name in ["a", "b", "c", "d", "e", "f"] {
            files[name] = try await space.createFile("\(name).txt", Array(name.utf8))
        }
        let anchor = try await provider.currentAnchor(in: space.container)
        let first = try await provider.enumerateFolder(space.folder.id, in: space.container, from: nil, pageSize: 2)
        guard let next = first.next else { throw space.failure("six items fit one page of two") }
        // Between pages: a create, a delete and renames (of items on the first page and after it): the children
        // after the first page are no longer where they were among all children.
        let created = try await space.createFile("new.txt", Array("new".utf8))
        guard let deleted = files["b"], let renamed = files["a"], let moved = files["f"] else { return }
        try await provider.deleteItem(deleted.id, in: space.container, baseVersion: deleted.version)
        let renamedNow = try await provider.modifyItem(
            renamed.id, in: space.container, baseVersion: renamed.version,
            changes: RemoteItemChanges(name: "z renamed.txt"), contents: nil)
        let movedNow = try await provider.modifyItem(
            moved.id, in: space.container, baseVersion: moved.version,
            changes: RemoteItemChanges(name: "0 renamed.txt"), contents: nil)
        var listed = first.items
        var cursor: PageCursor? = next
        while let current = cursor {
            let page = try await provider.enumerateFolder(
                space.folder.id, in: space.container, from: current, pageSize: 2)
            listed += page.items
            cursor = page.next
        }
        let unchanged = ["c", "d", "e"].compactMap { files[$0]?.id }
        for id in unchanged {
            try space.expect(
                listed.filter { $0.id == id }.count == 1,
                "an unchanged child is listed \(listed.filter { $0.id == id }.count) times across pages changed "
                    + "meanwhile: \(listed.map(\.name))")
        }
        let changes = try await allChanges(since: anchor, space)
        try space.expect(changes.updated[created.id] != nil, "a create between pages is not among the changes")
        try space.expect(changes.deleted.contains(deleted.id), "a delete between pages is not among the deletions")
        try space.expect(
            changes.updated[renamed.id]?.name == renamedNow.name,
            "a rename between pages is reported as \(String(describing: changes.updated[renamed.id]))")
        try space.expect(
            changes.updated[moved.id]?.name == movedNow.name,
            "a rename between pages is reported as \(String(describing: changes.updated[moved.id]))")
        let after = try await allChanges(since: changes.anchor, space)
        try space.expect(
            after.updated.isEmpty && after.deleted.isEmpty,
            "changes since the newest anchor, with nothing changed: \(after.updated.values.map(\.name)), "
                + "deleted \(after.deleted)")
    }

    // MARK: Anchors across restarts and processes

    /// See ``Check/anchorsAcrossRestarts``.
    func checkAnchorsAcrossRestarts(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let kept = try await space.createFile("kept.txt", Array("kept".utf8))
        let doomed = try await space.createFile("doomed.txt", Array("doomed".utf8))
        let anchor = try await provider.currentAnchor(in: space.container)
        let changed = try await provider.modifyItem(
            kept.id, in: space.container, baseVersion: kept.version, changes: RemoteItemChanges(name: "kept 2.txt"),
            contents: try space.scratchFile(Array("changed".utf8)))
        try await provider.deleteItem(doomed.id, in: space.container, baseVersion: doomed.version)
        let created = try await space.createFile("born.txt", Array("born".utf8))

        // A new provider (a restart) answers for the anchor the old one gave.
        let restarted = try await makeProvider()
        let changes: (updated: [ItemID: RemoteItem], deleted: Set<ItemID>, anchor: SyncAnchor)
        do {
            changes = try await allChanges(since: anchor, space, using: restarted)
        } catch let error as FolioError {
            throw space.failure("a new provider does not answer for the anchor of the one before: \(error)")
        }
        try space.expect(
            changes.updated[changed.id]?.version == changed.version
                && changes.updated[changed.id]?.name == "kept 2.txt",
            "after a restart, a change is reported as \(String(describing: changes.updated[changed.id]))")
        try space.expect(changes.deleted.contains(doomed.id), "after a restart, a delete is not reported")
        try space.expect(changes.updated[created.id] != nil, "after a restart, a create is not reported")

        // Changes made by a provider in another process (another device).
        guard let makeRival else { return }
        let rival = try makeRival()
        defer { rival.stop() }
        let before = try await restarted.currentAnchor(in: space.container)
        let theirs = ItemID.generate()
        try rival.send(
            RivalCommand(
                operation: .create, container: space.container, id: theirs, parentID: space.folder.id,
                name: "theirs.txt", contents: try space.scratchFile(Array("theirs".utf8)).string,
                startAt: RivalCommand.now()))
        let answer = try await rival.answer()
        try space.expect(answer.outcome == .done, "the rival's create: \(answer)")
        try rival.send(
            RivalCommand(
                operation: .delete, container: space.container, id: created.id, baseVersion: created.version,
                startAt: RivalCommand.now()))
        let deleteAnswer = try await rival.answer()
        try space.expect(deleteAnswer.outcome == .done, "the rival's delete: \(deleteAnswer)")
        let fromRival = try await allChanges(since: before, space, using: restarted)
        try space.expect(
            fromRival.updated[theirs]?.name == "theirs.txt" && fromRival.updated[theirs]?.parentID == space.folder.id,
            "a create in another process is reported as \(String(describing: fromRival.updated[theirs]))")
        try space.expect(fromRival.deleted.contains(created.id), "a delete in another process is not reported")
        let fromOld = try await allChanges(since: anchor, space)
        try space.expect(
            fromOld.updated[theirs] != nil && fromOld.deleted.contains(created.id),
            "the first provider does not report the other process's changes since its own old anchor")
    }

    // MARK: Expired anchors

    /// See ``Check/expiredAnchors``.
    func checkExpiredAnchors(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        try await space.expectError(.anchorExpired, "changes since a garbage anchor") {
            _ = try await provider.changes(in: space.container, since: SyncAnchor("not an anchor at all"))
        }
        try await space.expectError(.anchorExpired, "changes since an empty anchor") {
            _ = try await provider.changes(in: space.container, since: SyncAnchor(""))
        }
        guard let expireAnchors = options.expireAnchors else { return }
        let anchor = try await provider.currentAnchor(in: space.container)
        let file = try await space.createFile("after.txt", Array("after".utf8))
        try await expireAnchors(space.container)
        try await space.expectError(.anchorExpired, "changes since an anchor the provider expired") {
            _ = try await provider.changes(in: space.container, since: anchor)
        }
        // A fresh anchor works again, and so does a fresh listing.
        let fresh = try await provider.currentAnchor(in: space.container)
        let changed = try await provider.modifyItem(
            file.id, in: space.container, baseVersion: file.version, changes: RemoteItemChanges(name: "later.txt"),
            contents: nil)
        let changes = try await allChanges(since: fresh, space)
        try space.expect(
            changes.updated[file.id]?.name == changed.name,
            "a change after the expiry is not reported from a new anchor")
        let listed = try await space.provider.enumerateWholeFolder(space.folder.id, in: space.container)
        try space.expect(listed.map(\.id) == [file.id], "the folder lists \(listed.map(\.name)) after the expiry")
    }

    // MARK: Items by id

    /// See ``Check/itemLookup``.
    func checkItemLookup(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let folder = try await space.createFolder("Looked up")
        let file = try await space.createFile("looked.txt", Array("one".utf8), parentID: folder.id)
        let found = try await provider.item(file.id, in: space.container)
        try space.expect(
            found.id == file.id && found.version == file.version && found.parentID == folder.id
                && found.name == file.name && found.size == file.size,
            "item(_:in:) describes a new file as \(found), create said \(file)")
        let changed = try await provider.modifyItem(
            file.id, in: space.container, baseVersion: file.version,
            changes: RemoteItemChanges(parentID: .some(space.folder.id), name: "moved.txt"),
            contents: try space.scratchFile(Array("two, longer".utf8)))
        let again = try await makeProvider().item(file.id, in: space.container)
        try space.expect(
            again.version == changed.version && again.name == "moved.txt" && again.parentID == space.folder.id
                && again.size == 11,
            "item(_:in:) of a new provider describes a changed file as \(again), the change gave \(changed)")
        try await provider.deleteItem(file.id, in: space.container, baseVersion: changed.version)
        try await space.expectError(.notFound, "item(_:in:) of a deleted file") {
            _ = try await provider.item(file.id, in: space.container)
        }
        try await space.expectError(.notFound, "item(_:in:) of an id nobody made") {
            _ = try await provider.item(.generate(), in: space.container)
        }
        let folderNow = try await provider.item(folder.id, in: space.container)
        try space.expect(folderNow.kind == .directory && folderNow.name == "Looked up", "the folder is \(folderNow)")
    }

    // MARK: Cost of changes

    /// See ``Check/changesCostInProportion``.
    func checkChangesCostInProportion(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let quiet = try await space.createFolder("Quiet")
        var quietFiles: [RemoteItem] = []
        for number in 0..<30 {
            quietFiles.append(try await space.createFile("q\(number).txt", Array("\(number)".utf8), parentID: quiet.id))
        }
        let busy = try await space.createFolder("Busy")
        let edited = try await space.createFile("edited.txt", Array("one".utf8), parentID: busy.id)
        // Listed, as a client would have listed them before, and caught up with the changes so far (a provider
        // may learn of some late: the folders' own times, changed by the creates, seen by a watcher's news).
        _ = try await provider.enumerateWholeFolder(quiet.id, in: space.container)
        _ = try await provider.enumerateWholeFolder(busy.id, in: space.container)
        var anchor = try await provider.currentAnchor(in: space.container)
        for _ in 0..<100 {
            let caughtUp = try await provider.changes(in: space.container, since: anchor)
            anchor = caughtUp.anchor
            if !caughtUp.moreComing { break }
        }
        let added = try await space.createFile("added.txt", Array("added".utf8), parentID: busy.id)
        let changed = try await provider.modifyItem(
            edited.id, in: space.container, baseVersion: edited.version, changes: RemoteItemChanges(),
            contents: try space.scratchFile(Array("two".utf8)))
        var reported: [RemoteItem] = []
        var deleted: [ItemID] = []
        var current = anchor
        for _ in 0..<100 {
            let changes = try await provider.changes(in: space.container, since: current)
            try space.expect(!changes.isFullEnumeration, "changes answered with a full enumeration")
            reported += changes.updated
            deleted += changes.deleted
            current = changes.anchor
            if !changes.moreComing { break }
        }
        let quietIDs = Set(quietFiles.map(\.id) + [quiet.id])
        let unrelated = reported.filter { quietIDs.contains($0.id) }
        try space.expect(
            unrelated.isEmpty, "changes in one folder report items of an unchanged folder: \(unrelated.map(\.name))")
        try space.expect(deleted.isEmpty, "changes report deletions nobody made: \(deleted)")
        try space.expect(
            Set(reported.map(\.id)).isSuperset(of: [added.id, changed.id]),
            "changes lack the create or the change: \(reported.map(\.name))")
        try space.expect(
            reported.count <= 6, "two changes are reported as \(reported.count) items: \(reported.map(\.name))")
    }
}
