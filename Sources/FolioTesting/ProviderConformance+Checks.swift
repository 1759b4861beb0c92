import FolioCore

extension ProviderConformance {
    // MARK: Create and enumerate

    /// See ``Check/createAndEnumerate``.
    func checkCreateAndEnumerate(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let text = Array("Hello, Folio!\n".utf8)
        let folderTemplate = space.template("Folder", kind: .directory, mode: 0o750)
        let folder = try await provider.createItem(folderTemplate, contents: nil)
        let subfolder = try await provider.createItem(
            space.template("Sub folder", kind: .directory, parentID: folder.id), contents: nil
        )
        let fileTemplate = space.template("hello.txt", parentID: folder.id, mode: 0o640)
        let file = try await provider.createItem(fileTemplate, contents: try space.scratchFile(text))
        let empty = try await provider.createItem(space.template("empty.txt"), contents: nil)
        let nested = try await space.createFile("deep é.md", Array("# deep\n".utf8), parentID: subfolder.id)
        var created = [folder, subfolder, file, empty, nested]
        if options.supportsSymlinks {
            let link = try await provider.createItem(
                space.template("link", kind: .symlink, symlinkTarget: "Folder/hello.txt"), contents: nil
            )
            try space.expect(link.kind == .symlink, "a created symlink is described as \(link.kind)")
            try space.expect(
                link.symlinkTarget == "Folder/hello.txt", "symlink target is \(String(describing: link.symlinkTarget))"
            )
            created.append(link)
        }

        try space.expect(folder.id == folderTemplate.id, "create returned id \(folder.id), not the template's")
        try space.expect(file.id == fileTemplate.id, "create returned id \(file.id), not the template's")
        try space.expect(file.kind == .file && file.size == Int64(text.count), "file described as \(file)")
        try space.expect(file.parentID == folder.id, "file's parent is \(String(describing: file.parentID))")
        try space.expect(folder.parentID == space.folder.id, "folder's parent is not the workspace")
        try space.expect(empty.size == 0, "empty file has size \(empty.size)")
        try space.expect(nested.parentID == subfolder.id, "nested file's parent is wrong")
        if options.preservesMode {
            try space.expect(file.mode & 0o777 == 0o640, "file mode \(String(file.mode, radix: 8)), asked 640")
            try space.expect(folder.mode & 0o777 == 0o750, "folder mode \(String(folder.mode, radix: 8)), asked 750")
        }
        if options.preservesModificationTime {
            try space.expect(
                file.modificationTime == ConformanceWorkspace.sampleTime,
                "file mtime \(file.modificationTime), asked \(ConformanceWorkspace.sampleTime)"
            )
        }

        let listed = try await space.items()
        try space.expect(
            listed.count == created.count, "enumeration lists \(listed.count) items, \(created.count) were created"
        )
        for item in created {
            guard let found = listed[item.id] else { throw space.failure("enumeration lacks \(item.name)") }
            try space.expect(
                found.name == item.name && found.parentID == item.parentID && found.kind == item.kind
                    && found.size == item.size && found.symlinkTarget == item.symlinkTarget
                    && found.container == space.container,
                "enumeration describes \(item.name) as \(found), create said \(item)"
            )
            try space.expect(
                found.version == item.version,
                "\(item.name): enumeration version \(found.version), create returned \(item.version)"
            )
            if options.preservesModificationTime && item.kind == .file {
                try space.expect(found.modificationTime == item.modificationTime, "\(item.name): mtime changed")
            }
        }
        let fetched = try await space.fetch(file)
        try space.expect(fetched.bytes == text, "fetched content of a new file differs from what was created")
    }

    // MARK: Ids across renames and moves

    /// See ``Check/idsStableAcrossRenameAndMove``.
    func checkIDsStableAcrossRenameAndMove(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let file = try await space.createFile("a.txt", Array("a".utf8))
        let folderA = try await space.createFolder("A")
        let child = try await space.createFile("c.txt", Array("child".utf8), parentID: folderA.id)
        let folderB = try await space.createFolder("B")

        let renamed = try await provider.modifyItem(
            file.id, in: space.container, baseVersion: "stale-version-of-a-metadata-change",
            changes: RemoteItemChanges(name: "renamed.txt"), contents: nil
        )
        try space.expect(renamed.id == file.id && renamed.name == "renamed.txt", "rename returned \(renamed)")

        let moved = try await provider.modifyItem(
            file.id, in: space.container, baseVersion: renamed.version,
            changes: RemoteItemChanges(parentID: .some(folderB.id)), contents: nil
        )
        try space.expect(moved.id == file.id && moved.parentID == folderB.id, "move returned \(moved)")
        try space.expect(
            !moved.changedElsewhere, "a move from the current version was answered as changed elsewhere")

        let movedFolder = try await provider.modifyItem(
            folderA.id, in: space.container, baseVersion: folderA.version,
            changes: RemoteItemChanges(parentID: .some(folderB.id), name: "A moved"), contents: nil
        )
        try space.expect(
            movedFolder.id == folderA.id && movedFolder.name == "A moved", "folder move gave \(movedFolder)"
        )

        var listed = try await space.items()
        try space.expect(listed[file.id]?.name == "renamed.txt", "renamed file not listed under its id")
        try space.expect(listed[file.id]?.parentID == folderB.id, "moved file not listed in its new folder")
        try space.expect(listed[folderA.id]?.parentID == folderB.id, "moved folder not listed in its new parent")
        try space.expect(listed[child.id]?.parentID == folderA.id, "child of a moved folder lost its parent or id")
        try space.expect(listed.count == 4, "enumeration lists \(listed.count) items after moves, expected 4")
        let childContent = try await space.fetch(listed[child.id] ?? child)
        try space.expect(childContent.bytes == Array("child".utf8), "content of a moved folder's child changed")

        try await space.expectError(.exists, "renaming onto a taken name") {
            _ = try await provider.modifyItem(
                folderA.id, in: space.container, baseVersion: movedFolder.version,
                changes: RemoteItemChanges(name: "renamed.txt"), contents: nil
            )
        }
        listed = try await space.items()
        try space.expect(listed[folderA.id]?.name == "A moved", "a refused rename changed the folder")
        try space.expect(listed[file.id]?.kind == .file, "a refused rename replaced the file at the taken name")

        let atRoot = try await provider.modifyItem(
            file.id, in: space.container, baseVersion: moved.version,
            changes: RemoteItemChanges(parentID: .some(nil), name: "root-\(space.folder.name).txt"), contents: nil
        )
        try space.expect(atRoot.id == file.id && atRoot.parentID == nil, "move to the root gave \(atRoot)")
        let back = try await provider.modifyItem(
            file.id, in: space.container, baseVersion: atRoot.version,
            changes: RemoteItemChanges(parentID: .some(space.folder.id), name: "back.txt"), contents: nil
        )
        try space.expect(back.parentID == space.folder.id && back.id == file.id, "move back gave \(back)")
    }

    /// See ``Check/idsStableAcrossContainers``.
    func checkIDsStableAcrossContainers(_ space: ConformanceWorkspace) async throws {
        guard let other = options.secondContainer else { return }
        let provider = space.provider
        let folder = try await space.createFolder("Travelling folder")
        let child = try await space.createFile("inside.txt", Array("inside".utf8), parentID: folder.id)
        let file = try await space.createFile("traveller.txt", Array("travels".utf8))

        let suffix = space.folder.name
        let movedFile = try await provider.modifyItem(
            file.id, in: space.container, baseVersion: file.version,
            changes: RemoteItemChanges(container: other, parentID: .some(nil), name: "traveller-\(suffix).txt"),
            contents: nil
        )
        try space.expect(
            movedFile.id == file.id && movedFile.container == other && movedFile.parentID == nil,
            "move to another container gave \(movedFile)"
        )
        let movedFolder = try await provider.modifyItem(
            folder.id, in: space.container, baseVersion: folder.version,
            changes: RemoteItemChanges(container: other, parentID: .some(nil), name: "folder-\(suffix)"),
            contents: nil
        )
        try space.expect(
            movedFolder.id == folder.id && movedFolder.container == other && movedFolder.parentID == nil,
            "folder move to another container gave \(movedFolder)"
        )

        let here = try await space.items()
        try space.expect(here.isEmpty, "items moved away are still listed in \(space.container): \(here.values)")
        let there = try await space.items(in: other, wholeContainer: true)
        try space.expect(there[file.id]?.name == "traveller-\(suffix).txt", "moved file not listed in \(other)")
        try space.expect(there[folder.id]?.parentID == nil, "moved folder not at the root of \(other)")
        try space.expect(
            there[child.id]?.parentID == folder.id, "child of a folder moved across containers lost its id"
        )
        let content = try await space.fetch(there[file.id] ?? movedFile)
        try space.expect(content.bytes == Array("travels".utf8), "content changed by a move across containers")

        try await provider.deleteItem(child.id, in: other, baseVersion: nil)
        try await provider.deleteItem(folder.id, in: other, baseVersion: nil)
        try await provider.deleteItem(file.id, in: other, baseVersion: nil)
    }

    // MARK: Fetch

    /// See ``Check/fetchReturnsExactBytes``.
    func checkFetchReturnsExactBytes(_ space: ConformanceWorkspace) async throws {
        var random = SeededRandom(seed: 0xC0FFEE)
        let bytes = random.bytes((3 << 20) + 12_345)
        let file = try await space.createFile("random.bin", bytes)
        try space.expect(file.size == Int64(bytes.count), "created size \(file.size), sent \(bytes.count)")
        let fetched = try await space.fetch(file)
        try space.expect(fetched.bytes.count == bytes.count, "fetched \(fetched.bytes.count) bytes of \(bytes.count)")
        try space.expect(fetched.bytes == bytes, "fetched bytes differ from those created")
        try space.expect(
            fetched.item.id == file.id && fetched.item.version == file.version, "fetch returned \(fetched.item)"
        )
        let progress = fetched.progress
        try space.expect(!progress.isEmpty, "fetch reported no progress")
        try space.expect(progress == progress.sorted(), "progress went backwards: \(progress)")
        try space.expect(
            progress.last == Int64(bytes.count), "last progress \(progress.last ?? -1), size \(bytes.count)"
        )
        try space.expect(progress.allSatisfy { $0 <= Int64(bytes.count) }, "progress beyond the size: \(progress)")

        let empty = try await space.createFile("empty.bin", [])
        let fetchedEmpty = try await space.fetch(empty)
        try space.expect(fetchedEmpty.bytes.isEmpty, "an empty file fetched as \(fetchedEmpty.bytes.count) bytes")
    }

    /// See ``Check/fetchChecksVersionAndExistence``.
    func checkFetchChecksVersionAndExistence(_ space: ConformanceWorkspace) async throws {
        let file = try await space.createFile("versioned.txt", Array("one".utf8))
        try await space.expectError(.conflict, "fetch of a version the item is not at") {
            _ = try await space.fetch(file, version: file.version + "-not")
        }
        var ghost = file
        ghost.id = .generate()
        try await space.expectError(.notFound, "fetch of an id the remote never had") {
            _ = try await space.fetch(ghost)
        }
        try await space.provider.deleteItem(file.id, in: space.container, baseVersion: file.version)
        try await space.expectError(.notFound, "fetch of a deleted item") { _ = try await space.fetch(file) }
    }

    /// See ``Check/fetchCancellation``.
    func checkFetchCancellation(_ space: ConformanceWorkspace) async throws {
        guard let makeSlowProvider else { return }
        var random = SeededRandom(seed: 7)
        let bytes = random.bytes(4 << 20)
        let file = try await space.createFile("slow.bin", bytes)
        let slow = try await makeSlowProvider()
        let destination = space.scratch.appending("cancelled-fetch")
        let recorder = ProgressRecorder()
        let fetch = Task {
            defer { recorder.markFinished() }
            return try await slow.fetchContents(
                of: file.id, in: file.container, version: file.version, to: destination,
                progress: { recorder.record($0) }
            )
        }
        await recorder.waitForProgress()
        fetch.cancel()
        do {
            _ = try await fetch.value
            throw space.failure("a cancelled fetch completed (is the slow provider slow enough?)")
        } catch let error as FolioError {
            try space.expect(
                ExpectedError.interrupted.matches(error), "a cancelled fetch threw \(error), not .interrupted"
            )
        }
        let again = try await space.fetch(file)
        try space.expect(again.bytes == bytes, "content changed after a cancelled fetch")
    }

    // MARK: Modify

    /// See ``Check/staleModifyConflicts``.
    func checkStaleModifyConflicts(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let first = try await space.createFile("doc.txt", Array("first version".utf8))
        let second = try await provider.modifyItem(
            first.id, in: space.container, baseVersion: first.version, changes: RemoteItemChanges(),
            contents: try space.scratchFile(Array("second version".utf8))
        )
        try space.expect(second.id == first.id, "a content change changed the id")
        try space.expect(second.version != first.version, "a content change kept version \(first.version)")
        try space.expect(second.size == 14, "size after a content change is \(second.size)")

        try await space.expectError(.conflict, "content change based on a stale version") {
            _ = try await provider.modifyItem(
                first.id, in: space.container, baseVersion: first.version, changes: RemoteItemChanges(),
                contents: try space.scratchFile(Array("third".utf8))
            )
        }
        let afterConflict = try await space.fetch(second)
        try space.expect(
            afterConflict.bytes == Array("second version".utf8), "a refused (conflicting) change altered the content"
        )

        let sameShape = try await provider.modifyItem(
            first.id, in: space.container, baseVersion: second.version,
            changes: RemoteItemChanges(modificationTime: second.modificationTime),
            contents: try space.scratchFile(Array("SECOND VERSION".utf8))
        )
        try space.expect(
            sameShape.version != second.version,
            "a content change keeping size and mtime kept version \(second.version)"
        )
        let fetched = try await space.fetch(sameShape)
        try space.expect(fetched.bytes == Array("SECOND VERSION".utf8), "same-size change not stored")

        let metadataOnly = try await provider.modifyItem(
            first.id, in: space.container, baseVersion: first.version,
            changes: RemoteItemChanges(name: "doc renamed.txt", mode: 0o600), contents: nil
        )
        try space.expect(metadataOnly.name == "doc renamed.txt", "a metadata change with a stale base was not applied")
        try space.expect(
            metadataOnly.changedElsewhere,
            "a metadata change with a stale base did not say the content changed elsewhere (the caller would take "
                + "version \(metadataOnly.version) for the content it has)")
        if options.preservesMode {
            try space.expect(
                metadataOnly.mode & 0o777 == 0o600, "mode after chmod: \(String(metadataOnly.mode, radix: 8))"
            )
        }
        let content = try await space.fetch(metadataOnly)
        try space.expect(content.bytes == Array("SECOND VERSION".utf8), "a metadata change altered the content")

        try await space.expectError(.notFound, "modify of an id the remote never had") {
            _ = try await provider.modifyItem(
                .generate(), in: space.container, baseVersion: "1", changes: RemoteItemChanges(name: "x"), contents: nil
            )
        }
    }

    // MARK: Create retries

    /// See ``Check/createIsIdempotent``.
    func checkCreateIsIdempotent(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let template = space.template("once.txt")
        let content = try space.scratchFile(Array("only once".utf8))
        let first = try await provider.createItem(template, contents: content)
        let retry = try await provider.createItem(template, contents: content)
        try space.expect(retry.id == first.id, "a retried create returned id \(retry.id), first \(first.id)")
        try space.expect(retry.version == first.version, "a retried create changed the version")

        let folderTemplate = space.template("Once folder", kind: .directory)
        let folder = try await provider.createItem(folderTemplate, contents: nil)
        let folderRetry = try await provider.createItem(folderTemplate, contents: nil)
        try space.expect(folderRetry.id == folder.id, "a retried folder create returned another item")

        try await space.expectError(.exists, "create of a taken name with another id") {
            _ = try await provider.createItem(space.template("once.txt"), contents: try space.scratchFile([1, 2, 3]))
        }
        try await space.expectError(.exists, "folder create over a taken name") {
            _ = try await provider.createItem(space.template("once.txt", kind: .directory), contents: nil)
        }
        let listed = try await space.items()
        try space.expect(listed.count == 2, "after retries the workspace lists \(listed.count) items, expected 2")
        try space.expect(
            listed.values.filter { $0.name == "once.txt" }.count == 1, "a retried create made a duplicate"
        )
        let fetched = try await space.fetch(first)
        try space.expect(fetched.bytes == Array("only once".utf8), "a refused create replaced the content")
    }

    /// See ``Check/createManyAtOnce``.
    func checkCreateManyAtOnce(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let taken = try await space.createFile("taken.txt", Array("first".utf8))
        let files: [(name: String, bytes: [UInt8]?)] = [
            ("one.txt", Array("one".utf8)), ("two.txt", [2, 2]), ("empty.txt", nil), ("Folder", nil),
            ("taken.txt", [9]), ("bad/name", [9]), ("three.txt", Array("three".utf8)),
        ]
        let creations = try files.map { file in
            ItemCreation(
                space.template(file.name, kind: file.name == "Folder" ? .directory : .file),
                contents: try file.bytes.map { try space.scratchFile($0) })
        }
        let succeeding = [0, 1, 2, 3, 6]

        let first = await provider.createItems(creations)
        try space.expect(first.count == creations.count, "\(creations.count) creates got \(first.count) answers")
        for index in succeeding {
            guard case .success(let item) = first[index], item.id == creations[index].template.id,
                item.name == files[index].name
            else {
                throw space.failure("create \(index) (\(files[index].name)) of a batch answered \(first[index])")
            }
        }
        guard case .failure(.exists) = first[4] else {
            throw space.failure("a create over a taken name in a batch answered \(first[4]), expected .exists")
        }
        guard case .failure(.invalidArgument) = first[5] else {
            throw space.failure("a create with a bad name in a batch answered \(first[5]), expected .invalidArgument")
        }

        let retried = await provider.createItems(creations)
        for index in succeeding {
            let (before, again) = (try first[index].get(), try retried[index].get())
            try space.expect(
                again.id == before.id && again.version == before.version,
                "retrying the batch answered \(again) for \(files[index].name), the first time \(before)")
        }
        let listed = try await space.items()
        try space.expect(
            listed.count == 6, "after a batch and its retry the workspace lists \(listed.count) items, expected 6")
        for index in [0, 1, 2, 6] {
            let fetched = try await space.fetch(try first[index].get())
            try space.expect(
                fetched.bytes == files[index].bytes ?? [], "\(files[index].name) does not hold what was sent")
        }
        let kept = try await space.fetch(taken)
        try space.expect(kept.bytes == Array("first".utf8), "a refused create in a batch replaced the content")
    }

    /// See ``Check/retryTagsRecognizeOwnWrites``.
    func checkRetryTagsRecognizeOwnWrites(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let base = try await space.createFile("tagged.txt", Array("one".utf8))
        let mine = RemoteItemChanges(retryTag: "writer-a@\(base.version)")
        let lost = try await provider.modifyItem(
            base.id, in: space.container, baseVersion: base.version, changes: mine,
            contents: try space.scratchFile(Array("two".utf8)))
        try await space.expectError(.conflict, "another writer's change based on the version before") {
            _ = try await provider.modifyItem(
                base.id, in: space.container, baseVersion: base.version,
                changes: RemoteItemChanges(retryTag: "writer-b@\(base.version)"),
                contents: try space.scratchFile(Array("theirs".utf8)))
        }
        let newer: RemoteItem
        do {
            newer = try await provider.modifyItem(
                base.id, in: space.container, baseVersion: base.version, changes: mine,
                contents: try space.scratchFile(Array("three".utf8)))
        } catch FolioError.conflict {
            throw space.failure("the writer's retry over its own earlier write was refused as a conflict")
        }
        try space.expect(newer.version != lost.version, "a retry with new content kept version \(lost.version)")
        try space.expect(try await space.fetch(newer).bytes == Array("three".utf8), "the retry's content is not stored")
        // Someone else changes it (without a tag): the writer's retry no longer matches.
        let theirs = try await provider.modifyItem(
            base.id, in: space.container, baseVersion: newer.version, changes: RemoteItemChanges(),
            contents: try space.scratchFile(Array("someone else's".utf8)))
        try await space.expectError(.conflict, "a retry over a version someone else made since") {
            _ = try await provider.modifyItem(
                base.id, in: space.container, baseVersion: base.version, changes: mine,
                contents: try space.scratchFile(Array("four".utf8)))
        }
        try await space.expectError(.conflict, "a tagged delete of a version someone else made since") {
            try await provider.deleteItem(
                base.id, in: space.container, baseVersion: base.version, retryTag: mine.retryTag)
        }
        try space.expect(try await space.fetch(theirs).bytes == Array("someone else's".utf8), "their change was lost")

        // A create whose answer was lost, retried with new content, then deleted without a base version.
        var template = space.template("created.txt")
        template.retryTag = "writer-a@new"
        let created = try await provider.createItem(template, contents: try space.scratchFile(Array("v1".utf8)))
        let retried: RemoteItem
        do {
            retried = try await provider.createItem(template, contents: try space.scratchFile(Array("v2".utf8)))
        } catch FolioError.conflict {
            throw space.failure("a retried create with new content over its own first attempt was a conflict")
        }
        try space.expect(retried.id == created.id, "a retried create made another item")
        try space.expect(try await space.fetch(retried).bytes == Array("v2".utf8), "a retried create kept old content")
        try await provider.deleteItem(created.id, in: space.container, baseVersion: nil, retryTag: template.retryTag)
        try space.expect(try await space.items()[created.id] == nil, "a tagged delete of its own create left it")
    }

    // MARK: Delete

    /// See ``Check/deleteIsIdempotent``.
    func checkDeleteIsIdempotent(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let file = try await space.createFile("doomed.txt", Array("bye".utf8))
        let changed = try await provider.modifyItem(
            file.id, in: space.container, baseVersion: file.version, changes: RemoteItemChanges(),
            contents: try space.scratchFile(Array("changed".utf8))
        )
        try await space.expectError(.conflict, "delete based on a version the item is no longer at") {
            try await provider.deleteItem(file.id, in: space.container, baseVersion: file.version)
        }
        try space.expect(try await space.items()[file.id] != nil, "a refused delete removed the item")

        try await provider.deleteItem(file.id, in: space.container, baseVersion: changed.version)
        try space.expect(try await space.items()[file.id] == nil, "a deleted item is still listed")
        try await provider.deleteItem(file.id, in: space.container, baseVersion: changed.version)
        try await provider.deleteItem(file.id, in: space.container, baseVersion: nil)
        try await provider.deleteItem(.generate(), in: space.container, baseVersion: nil)

        let folder = try await space.createFolder("Empty folder")
        try await provider.deleteItem(folder.id, in: space.container, baseVersion: folder.version)
        try await provider.deleteItem(folder.id, in: space.container, baseVersion: folder.version)
        if options.supportsSymlinks {
            let link = try await provider.createItem(
                space.template("doomed link", kind: .symlink, symlinkTarget: "nowhere"), contents: nil
            )
            try await provider.deleteItem(link.id, in: space.container, baseVersion: link.version)
            try await provider.deleteItem(link.id, in: space.container, baseVersion: nil)
        }
        let remaining = try await space.items()
        try space.expect(remaining.isEmpty, "deleted items still listed: \(remaining.values.map(\.name))")
    }

    /// See ``Check/deleteNonEmptyFolderFails``.
    func checkDeleteNonEmptyFolderFails(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let folder = try await space.createFolder("Full folder")
        let child = try await space.createFile("child.txt", Array("child".utf8), parentID: folder.id)
        try await space.expectError(.notEmpty, "delete of a folder with a child") {
            try await provider.deleteItem(folder.id, in: space.container, baseVersion: nil)
        }
        let listed = try await space.items()
        try space.expect(listed[folder.id] != nil && listed[child.id] != nil, "a refused folder delete removed items")
        try await provider.deleteItem(child.id, in: space.container, baseVersion: child.version)
        try await provider.deleteItem(folder.id, in: space.container, baseVersion: nil)
        try space.expect(try await space.items().isEmpty, "folder still listed after deleting its child and itself")
    }

    // MARK: Names

    /// See ``Check/badNamesAreRefused``.
    func checkBadNamesAreRefused(_ space: ConformanceWorkspace) async throws {
        let provider = space.provider
        let existing = try await space.createFile("fine.txt", Array("fine".utf8))
        let tooLong = [String(repeating: "a", count: 256), String(repeating: "é", count: 128)]
        let invalid = ["a/b", "", ".", "..", "nul\u{0}byte"] + options.extraInvalidNames
        let cases =
            tooLong.map { ($0, ExpectedError.nameTooLong) } + invalid.map { ($0, ExpectedError.invalidArgument) }
        for (name, expected) in cases {
            let shown = name.count > 20 ? "\(name.prefix(8))… (\(name.utf8.count) bytes)" : "\"\(name)\""
            try await space.expectError(expected, "create of a file named \(shown)") {
                _ = try await provider.createItem(space.template(name), contents: try space.scratchFile([1]))
            }
            try await space.expectError(expected, "create of a folder named \(shown)") {
                _ = try await provider.createItem(space.template(name, kind: .directory), contents: nil)
            }
            try await space.expectError(expected, "rename to \(shown)") {
                _ = try await provider.modifyItem(
                    existing.id, in: space.container, baseVersion: existing.version,
                    changes: RemoteItemChanges(name: name), contents: nil
                )
            }
        }
        let fitting = String(repeating: "b", count: 255)
        let longest = try await provider.createItem(space.template(fitting), contents: try space.scratchFile([2]))
        try space.expect(longest.name == fitting, "a name of exactly 255 bytes was not stored as given")

        let listed = try await space.items()
        try space.expect(
            Set(listed.values.map(\.name)) == ["fine.txt", fitting],
            "refused names left items behind: \(listed.values.map { $0.name.prefix(20) })"
        )
        try space.expect(listed[existing.id]?.name == "fine.txt", "a refused rename changed the name")
    }
}
