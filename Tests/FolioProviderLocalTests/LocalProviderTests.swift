import FolioCore
@testable import FolioProviderLocal
import Foundation
import Synchronization
import SystemPackage
import XCTest

/// What is particular to the local provider: the remote's layout, ids of files made by hand, versions of files
/// edited by hand.
final class LocalProviderTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote()
    }

    override func tearDownWithError() throws {
        remote.remove()
    }

    // MARK: Containers and setup

    func testContainersComeFromDirectoriesAndTheManifest() async throws {
        try LocalProvider.addContainer(
            Container(id: ContainerID("com.example.secret"), displayName: "Secret", isPublic: false), at: remote.root
        )
        let manager = FileManager.default
        for name in ["com.example.unlisted", ".hidden"] {
            try manager.createDirectory(atPath: remote.root.appending(name).string, withIntermediateDirectories: true)
        }
        XCTAssertTrue(manager.createFile(atPath: remote.root.appending("stray.txt").string, contents: Data()))

        let containers = try await remote.provider().listContainers()
        XCTAssertEqual(containers, [
            Container.drive,
            TemporaryRemote.notes,
            Container(id: ContainerID("com.example.secret"), displayName: "Secret", isPublic: false),
            Container(id: ContainerID("com.example.unlisted"), displayName: "com.example.unlisted", isPublic: true),
        ])

        let manifest = try XCTUnwrap(manager.contents(atPath: remote.root.appending(".folio-remote.json").string))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: manifest) as? [String: Any])
        let entries = try XCTUnwrap(json["containers"] as? [[String: Any]])
        let secret = try XCTUnwrap(entries.first { $0["id"] as? String == "com.example.secret" })
        XCTAssertEqual(secret["displayName"] as? String, "Secret")
        XCTAssertEqual(secret["public"] as? Bool, false)
    }

    func testAddContainerUpdatesDisplayNameAndRefusesBadIDs() async throws {
        try LocalProvider.addContainer(
            Container(id: TemporaryRemote.notes.id, displayName: "My Notes", isPublic: false), at: remote.root
        )
        let notes = try await remote.provider().listContainers().first { $0.id == TemporaryRemote.notes.id }
        XCTAssertEqual(notes?.displayName, "My Notes")
        XCTAssertEqual(notes?.isPublic, false)
        for bad in [".hidden", "a/b", "", ".folio-x"] {
            XCTAssertThrowsError(
                try LocalProvider.addContainer(
                    Container(id: ContainerID(bad), displayName: "x", isPublic: true), at: remote.root
                )
            ) { error in
                XCTAssertEqual((error as? FolioError)?.errno, .invalidArgument, "\(bad): \(error)")
            }
        }
    }

    func testInitializeIsIdempotentAndRefusesNonEmptyDirectories() async throws {
        try LocalProvider.initialize(at: remote.root)
        try LocalProvider.initialize(at: remote.root)
        XCTAssertTrue(LocalProvider.isRemote(at: remote.root))
        let containers = try await remote.provider().listContainers()
        XCTAssertEqual(containers.map(\.id), [.drive, TemporaryRemote.notes.id])

        let plain = try TemporaryRemote(initialize: false)
        defer { plain.remove() }
        try LocalProvider.initialize(at: plain.root.appending("new/nested"))
        XCTAssertTrue(LocalProvider.isRemote(at: plain.root.appending("new/nested")))

        let thesis = plain.root.appending("thesis.tex").string
        XCTAssertTrue(FileManager.default.createFile(atPath: thesis, contents: Data()))
        XCTAssertThrowsError(try LocalProvider.initialize(at: plain.root)) { error in
            guard case FolioError.invalidArgument(let message)? = error as? FolioError else {
                return XCTFail("expected .invalidArgument, got \(error)")
            }
            XCTAssertTrue(message.contains("not empty"), message)
        }
        XCTAssertFalse(LocalProvider.isRemote(at: plain.root))
        XCTAssertThrowsError(try LocalProvider(root: plain.root)) { error in
            XCTAssertEqual((error as? FolioError)?.errno, .invalidArgument)
        }
    }

    func testUnknownContainerIsNotFound() async throws {
        let provider = try remote.provider()
        do {
            _ = try await provider.enumerateItems(in: ContainerID("com.example.missing"))
            XCTFail("enumerating a missing container succeeded")
        } catch let error as FolioError {
            XCTAssertEqual(error.errno, .noSuchFileOrDirectory, "\(error)")
        }
        try await provider.deleteItem(.generate(), in: ContainerID("com.example.missing"), baseVersion: nil)
    }

    // MARK: Versions

    func testExternalEditChangesTheVersion() async throws {
        let provider = try remote.provider()
        let created = try await provider.createItem(
            remote.template("edit.txt"), contents: try remote.contentFile("one")
        )
        try await Task.sleep(for: .milliseconds(20))
        try remote.writeByHand("two", to: "edit.txt")

        let listed = try await provider.enumerateItems(in: .drive).items
        let edited = try XCTUnwrap(listed.first { $0.id == created.id })
        XCTAssertNotEqual(edited.version, created.version)
        XCTAssertEqual(edited.size, 3)

        try await expectConflict(provider, created, "a change based on the version before the hand edit was accepted")
        XCTAssertEqual(try String(contentsOfFile: remote.path("edit.txt"), encoding: .utf8), "two")

        let destination = try remote.destination()
        _ = try await provider.fetchContents(
            of: created.id, in: .drive, version: edited.version, to: destination
        ) { _ in }
        XCTAssertEqual(try String(contentsOfFile: destination.string, encoding: .utf8), "two")
    }

    /// Uploads new content based on `item`'s version and expects `.conflict` (the remote changed since).
    private func expectConflict(
        _ provider: LocalProvider, _ item: RemoteItem, _ failure: String, line: UInt = #line
    ) async throws {
        do {
            _ = try await provider.modifyItem(
                item.id, in: .drive, baseVersion: item.version, changes: RemoteItemChanges(),
                contents: try remote.contentFile("mine")
            )
            XCTFail(failure, line: line)
        } catch FolioError.conflict {}
    }

    func testARetryTagAcceptsOnlyItsOwnUnchangedWrite() async throws {
        let provider = try remote.provider()
        let created = try await provider.createItem(
            remote.template("tag.txt"), contents: try remote.contentFile("one"))
        let mine = RemoteItemChanges(retryTag: "me@\(created.version)")
        // My upload lands, its answer is lost: I still believe the remote is at `created`.
        _ = try await provider.modifyItem(
            created.id, in: .drive, baseVersion: created.version, changes: mine,
            contents: try remote.contentFile("two"))
        // Another writer from the same base conflicts; I do not, and my new content replaces my lost one.
        do {
            _ = try await provider.modifyItem(
                created.id, in: .drive, baseVersion: created.version,
                changes: RemoteItemChanges(retryTag: "someone@\(created.version)"),
                contents: try remote.contentFile("theirs"))
            XCTFail("another writer's change based on an older version was accepted")
        } catch FolioError.conflict {}
        let third = try await provider.modifyItem(
            created.id, in: .drive, baseVersion: created.version, changes: mine,
            contents: try remote.contentFile("three"))
        XCTAssertEqual(try String(contentsOfFile: remote.path("tag.txt"), encoding: .utf8), "three")
        XCTAssertTrue(third.version.hasPrefix("3-"), third.version)
        // The same content again (a retry after a restart) leaves the version as it is.
        let again = try await provider.modifyItem(
            created.id, in: .drive, baseVersion: created.version, changes: mine,
            contents: try remote.contentFile("three"))
        XCTAssertEqual(again.version, third.version)
        // Once the file is edited by hand (the record of my write stays on it), my tag no longer matches.
        try await Task.sleep(for: .milliseconds(20))
        try remote.writeByHand("edited", to: "tag.txt")
        do {
            _ = try await provider.modifyItem(
                created.id, in: .drive, baseVersion: created.version, changes: mine,
                contents: try remote.contentFile("four"))
            XCTFail("a retry tag overwrote an edit made by hand")
        } catch FolioError.conflict {}
        XCTAssertEqual(try String(contentsOfFile: remote.path("tag.txt"), encoding: .utf8), "edited")
    }

    func testATaggedDeleteTakesOnlyItsOwnUnchangedWrite() async throws {
        let provider = try remote.provider()
        let base = try await provider.createItem(remote.template("a.txt"), contents: try remote.contentFile("one"))
        let tag = "me@\(base.version)"
        _ = try await provider.modifyItem(
            base.id, in: .drive, baseVersion: base.version, changes: RemoteItemChanges(retryTag: tag),
            contents: try remote.contentFile("two"))
        do {
            try await provider.deleteItem(base.id, in: .drive, baseVersion: base.version, retryTag: "other@x")
            XCTFail("a delete based on an older version, by another writer, was accepted")
        } catch FolioError.conflict {}
        try await provider.deleteItem(base.id, in: .drive, baseVersion: base.version, retryTag: tag)
        XCTAssertFalse(FileManager.default.fileExists(atPath: remote.path("a.txt")))

        // Without a base version: deleted only while it is what the tagged create wrote.
        var template = remote.template("b.txt")
        template.retryTag = "me@new"
        let created = try await provider.createItem(template, contents: try remote.contentFile("mine"))
        try remote.writeByHand("theirs", to: "b.txt")
        do {
            try await provider.deleteItem(created.id, in: .drive, baseVersion: nil, retryTag: "me@new")
            XCTFail("a delete without a base removed someone else's change")
        } catch FolioError.conflict {}
        XCTAssertEqual(try String(contentsOfFile: remote.path("b.txt"), encoding: .utf8), "theirs")
        var other = remote.template("c.txt")
        other.retryTag = "me@new"
        let mine = try await provider.createItem(other, contents: try remote.contentFile("mine"))
        try await provider.deleteItem(mine.id, in: .drive, baseVersion: nil, retryTag: "me@new")
        XCTAssertFalse(FileManager.default.fileExists(atPath: remote.path("c.txt")))
    }

    func testARetriedCreateSendsNewContentOnlyOverItsOwnWrite() async throws {
        let provider = try remote.provider()
        var template = remote.template("retried.txt")
        template.retryTag = "me@new"
        let first = try await provider.createItem(template, contents: try remote.contentFile("one"))
        let same = try await provider.createItem(template, contents: try remote.contentFile("one"))
        XCTAssertEqual(same.version, first.version, "the same content again changes nothing")
        let newer = try await provider.createItem(template, contents: try remote.contentFile("two"))
        XCTAssertNotEqual(newer.version, first.version)
        XCTAssertEqual(try String(contentsOfFile: remote.path("retried.txt"), encoding: .utf8), "two")
        try await Task.sleep(for: .milliseconds(20))
        try remote.writeByHand("edited", to: "retried.txt")
        do {
            _ = try await provider.createItem(template, contents: try remote.contentFile("three"))
            XCTFail("a retried create overwrote an edit made by hand")
        } catch FolioError.conflict {}
        XCTAssertEqual(try String(contentsOfFile: remote.path("retried.txt"), encoding: .utf8), "edited")
        let staged = try FileManager.default.contentsOfDirectory(atPath: remote.root.appending(".folio/staging").string)
        XCTAssertEqual(staged, [], "retried creates left their staged copies behind")
    }

    func testAStagedUploadOfAnOldDocumentIsNotTakenForAbandoned() async throws {
        // A staged file carries its document's modification time, however old; a provider starting on the same
        // remote (another mount) must not remove it while the upload is still at work.
        let staging = remote.root.appending(".folio/staging")
        _ = try remote.provider()
        let staged = staging.appending(ItemName.internalPrefix + "upload-in-progress")
        try Data("x".utf8).write(to: URL(fileURLWithPath: staged.string))
        try SystemCalls.setModificationTime(staged, Timestamp(seconds: 86_400 * 365, nanoseconds: 0))
        _ = try remote.provider()
        XCTAssertTrue(FileManager.default.fileExists(atPath: staged.string), "an upload in progress was removed")
    }

    func testAMalformedAttributeIsReplacedByAnIDThatSticks() async throws {
        try remote.writeByHand("x", to: "odd.txt")
        let path = FilePath(remote.path("odd.txt"))
        try SystemCalls.setExtendedAttribute(StoredAttributes.name, "not an attribute", of: path)
        let provider = try remote.provider()
        let firstScan = try await provider.enumerateItems(in: .drive).items
        let first = try XCTUnwrap(firstScan.first { $0.name == "odd.txt" })
        XCTAssertFalse(first.id.rawValue.hasPrefix("inode-"), "it kept an id derived from its inode: \(first.id)")
        XCTAssertEqual(try StoredAttributes.read(path).id, first.id)
        let secondScan = try await provider.enumerateItems(in: .drive).items
        let second = try XCTUnwrap(secondScan.first { $0.name == "odd.txt" })
        XCTAssertEqual(second.id, first.id)
    }

    func testAtomicSaveByHandKeepsTheItem() async throws {
        let provider = try remote.provider()
        let created = try await provider.createItem(
            remote.template("saved.txt"), contents: try remote.contentFile("one"))
        _ = try await provider.enumerateItems(in: .drive)
        // An editor's save on the remote folder: a new file, renamed over the document.
        try remote.writeByHand("two, saved", to: "saved.txt.tmp")
        try FileManager.default.removeItem(atPath: remote.path("saved.txt"))
        try FileManager.default.moveItem(atPath: remote.path("saved.txt.tmp"), toPath: remote.path("saved.txt"))

        let listed = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(listed.filter { $0.name == "saved.txt" }.map(\.id), [created.id], "the same item, changed")
        let saved = try XCTUnwrap(listed.first { $0.id == created.id })
        XCTAssertNotEqual(saved.version, created.version)
        XCTAssertEqual(saved.size, 10)
        try await expectConflict(
            provider, created, "a change based on the version before the save by hand was accepted")
        // A file at the place of an item that still exists elsewhere is a new item.
        try FileManager.default.moveItem(atPath: remote.path("saved.txt"), toPath: remote.path("kept.txt"))
        try remote.writeByHand("new", to: "saved.txt")
        let after = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(after.first { $0.name == "kept.txt" }?.id, created.id)
        XCTAssertNotEqual(after.first { $0.name == "saved.txt" }?.id, created.id)
        // Only a file passes its id to a file: a folder replaced by a file is a new item.
        try remote.writeByHand("inside", to: "Box/inside.txt")
        let withBox = try await provider.enumerateItems(in: .drive).items
        let box = try XCTUnwrap(withBox.first { $0.name == "Box" })
        try FileManager.default.removeItem(atPath: remote.path("Box"))
        try remote.writeByHand("a file now", to: "Box")
        let withFile = try await provider.enumerateItems(in: .drive).items
        let file = try XCTUnwrap(withFile.first { $0.name == "Box" })
        XCTAssertEqual(file.kind, .file)
        XCTAssertNotEqual(file.id, box.id)
    }

    func testContentChangeKeepsIDAndBumpsRevision() async throws {
        let provider = try remote.provider()
        let created = try await provider.createItem(remote.template("doc.txt"), contents: try remote.contentFile("one"))
        XCTAssertTrue(created.version.hasPrefix("1-"), created.version)
        let changed = try await provider.modifyItem(
            created.id, in: .drive, baseVersion: created.version, changes: RemoteItemChanges(),
            contents: try remote.contentFile("uno")
        )
        XCTAssertTrue(changed.version.hasPrefix("2-"), changed.version)
        XCTAssertEqual(changed.id, created.id)
        let path = FilePath(remote.path("doc.txt"))
        XCTAssertEqual(try StoredAttributes.read(path).id, created.id)
        XCTAssertEqual(try StoredAttributes.read(path).revision, 2)
        let staged = try FileManager.default.contentsOfDirectory(atPath: remote.root.appending(".folio/staging").string)
        XCTAssertEqual(staged, [], "uploads left behind in staging")
    }

    func testAttributesFitInTheInode() async throws {
        // ext4 keeps about 64 bytes of attributes in the inode; more costs every file a block of its own.
        let provider = try remote.provider()
        let bytes = [UInt8](repeating: 7, count: 4096)
        var template = remote.template("small.bin")
        template.retryTag = "\(UUID().uuidString)@new"
        _ = try await provider.createItem(template, contents: try remote.contentFile(bytes))
        let plain = remote.path("plain.bin")
        try Data(bytes).write(to: URL(fileURLWithPath: plain))
        var uploaded = stat()
        var written = stat()
        XCTAssertEqual(lstat(remote.path("small.bin"), &uploaded), 0)
        XCTAssertEqual(lstat(plain, &written), 0)
        XCTAssertEqual(uploaded.st_blocks, written.st_blocks, "the uploaded file takes more disk than its content")
        let encoded = try XCTUnwrap(
            SystemCalls.extendedAttribute(StoredAttributes.name, of: FilePath(remote.path("small.bin"))))
        XCTAssertLessThanOrEqual(encoded.utf8.count, 64, encoded)
    }

    func testAttributesWrittenBeforeTheyWereOneAreStillRead() async throws {
        // A file as an older Folio left it: id, revision, mode and the stamp of its own write in four attributes.
        try remote.writeByHand("old", to: "legacy.txt")
        let path = FilePath(remote.path("legacy.txt"))
        let id = ItemID.generate()
        try SystemCalls.setExtendedAttribute(StoredAttributes.Legacy.id, id.rawValue, of: path)
        try SystemCalls.setExtendedAttribute(StoredAttributes.Legacy.revision, "4", of: path)
        try SystemCalls.setExtendedAttribute(StoredAttributes.Legacy.mode, "400", of: path)
        try SystemCalls.setPermissions(path, 0o600)
        let provider = try remote.provider()
        let items = try await provider.enumerateItems(in: .drive).items
        let listed = try XCTUnwrap(items.first { $0.name == "legacy.txt" })
        XCTAssertEqual(listed.id, id)
        XCTAssertTrue(listed.version.hasPrefix("4-"), listed.version)
        XCTAssertEqual(listed.mode, 0o400)
        try SystemCalls.setExtendedAttribute(
            StoredAttributes.Legacy.writtenBy, "\(listed.version) me@3-old", of: path)
        // The legacy record of this writer's own write is recognized; the new content is written in one attribute.
        let changed = try await provider.modifyItem(
            id, in: .drive, baseVersion: "3-old", changes: RemoteItemChanges(retryTag: "me@3-old"),
            contents: try remote.contentFile("new"))
        XCTAssertEqual(changed.id, id)
        XCTAssertTrue(changed.version.hasPrefix("5-"), changed.version)
        XCTAssertEqual(changed.mode, 0o400)
        let stored = try StoredAttributes.read(path)
        XCTAssertEqual(stored.id, id)
        XCTAssertEqual(stored.revision, 5)
        XCTAssertNotNil(try SystemCalls.extendedAttribute(StoredAttributes.name, of: path))
    }

    func testStoredAttributesEncodeAndRefuseMalformedValues() {
        let full = StoredAttributes(id: ItemID("a b"), revision: 12, mode: 0o400, stamp: 0xabc)
        XCTAssertEqual(full.encoded, "12 400 abc a b")
        XCTAssertEqual(StoredAttributes(encoded: full.encoded), full)
        let bare = StoredAttributes(id: ItemID("x"))
        XCTAssertEqual(bare.encoded, "0 - - x")
        XCTAssertEqual(StoredAttributes(encoded: bare.encoded), bare)
        for malformed in ["", "1", "1 - -", "x - - id", "1 9 - id", "1 - z id"] {
            XCTAssertNil(StoredAttributes(encoded: malformed), malformed)
        }
        XCTAssertTrue(full.isWrite(by: nil, version: "v") == false)
        let stamped = StoredAttributes(stamp: StoredAttributes.stamp(version: "1-2-3", retryTag: "me@new"))
        XCTAssertTrue(stamped.isWrite(by: "me@new", version: "1-2-3"))
        XCTAssertFalse(stamped.isWrite(by: "me@new", version: "1-2-4"))
        XCTAssertFalse(stamped.isWrite(by: "you@new", version: "1-2-3"))
    }

    // MARK: Scans

    func testAScanDuringWhichAFileIsMovedFindsItOnce() throws {
        // (From, to, the folder whose listing the move follows.) The walk goes depth first, names sorted: A,
        // A/moving.txt, A/zsub, B, B/moving.txt.
        for (from, to, trigger) in [("B/moving.txt", "A/moving.txt", "B"), ("A/moving.txt", "B/moving.txt", "zsub")] {
            try remote.writeByHand("moves", to: from)
            try remote.writeByHand("stays", to: "A/zsub/other.txt")
            try remote.writeByHand("stays", to: "B/other.txt")
            var tree = try RemoteTree(layout: RemoteLayout(root: remote.root))
            let before = try tree.scan(.drive)
            let moving = try XCTUnwrap(before.first { $0.name == "moving.txt" })
            // Someone moves the file between folders while the walk is between them: it is met under neither
            // name (moved back to a folder already walked) or under both (moved ahead of the walk).
            let source = FilePath(remote.path(from)), destination = FilePath(remote.path(to))
            let moved = Mutex(false)
            tree.folderListed = { folder in
                guard folder.lastComponent?.string == trigger, !moved.withLock({ $0 }) else { return }
                moved.withLock { $0 = true }
                try? SystemCalls.rename(source, to: destination)
            }
            let after = try tree.scan(.drive)
            XCTAssertTrue(moved.withLock { $0 })
            tree.folderListed = nil
            let found = after.filter { $0.name == "moving.txt" }
            XCTAssertEqual(found.map(\.id), [moving.id], "moved \(from) → \(to) during a walk: found once, same id")
            XCTAssertEqual(found.first?.parentID, after.first { $0.name == (to.hasPrefix("A") ? "A" : "B") }?.id)
            try FileManager.default.removeItem(atPath: remote.path(to))
        }
    }

    func testAFolderWithAFutureModificationTimeIsWalkedOnce() throws {
        try remote.writeByHand("inside", to: "Future/inside.txt")
        try SystemCalls.setModificationTime(
            FilePath(remote.path("Future")), Timestamp(seconds: 4_070_908_800, nanoseconds: 0))
        var tree = try RemoteTree(layout: RemoteLayout(root: remote.root))
        _ = try tree.scan(.drive)
        SystemCalls.waitOneClockTick()
        let listings = Mutex(0)
        tree.folderListed = { _ in listings.withLock { $0 += 1 } }
        _ = try tree.scan(.drive)
        XCTAssertEqual(listings.withLock { $0 }, 2, "the root and Future/, once each: no walk made again")
    }

    func testADeleteWithoutABaseVersionDoesNotWalkTheRemote() throws {
        try remote.writeByHand("inside", to: "Folder/inside.txt")
        var tree = try RemoteTree(layout: RemoteLayout(root: remote.root))
        _ = try tree.scan(.drive)
        let listings = Mutex(0)
        tree.folderListed = { _ in listings.withLock { $0 += 1 } }
        for _ in 0..<20 { try tree.delete(.generate(), in: .drive, baseVersion: nil, retryTag: "me@new") }
        XCTAssertEqual(listings.withLock { $0 }, 0, "an item never created is looked up in the index only")
        try tree.delete(.generate(), in: .drive, baseVersion: "1-2-3", retryTag: "me@1-2-3")
        XCTAssertGreaterThan(listings.withLock { $0 }, 0, "an item known to exist is looked for in a walk")
    }

    // MARK: Ids of items made by hand

    func testFileCopiedInGetsAnIDAndKeepsIt() async throws {
        try remote.writeByHand("from a USB stick", to: "Inbox/copied.txt")
        let provider = try remote.provider()
        let first = try await provider.enumerateItems(in: .drive).items
        let folder = try XCTUnwrap(first.first { $0.name == "Inbox" })
        let file = try XCTUnwrap(first.first { $0.name == "copied.txt" })
        XCTAssertEqual(file.parentID, folder.id)
        XCTAssertEqual(
            try StoredAttributes.read(FilePath(remote.path("Inbox/copied.txt"))).id?.rawValue,
            file.id.rawValue
        )

        let again = try await LocalProvider(root: remote.root).enumerateItems(in: .drive).items
        XCTAssertEqual(Set(again.map(\.id)), Set(first.map(\.id)))

        try FileManager.default.moveItem(atPath: remote.path("Inbox/copied.txt"), toPath: remote.path("moved.txt"))
        let afterMove = try await provider.enumerateItems(in: .drive).items
        let moved = try XCTUnwrap(afterMove.first { $0.id == file.id })
        XCTAssertEqual(moved.name, "moved.txt")
        XCTAssertNil(moved.parentID)
    }

    func testCopyCarryingAnotherItemsIDGetsANewOne() async throws {
        let provider = try remote.provider()
        let original = try await provider.createItem(
            remote.template("original.txt"), contents: try remote.contentFile("o")
        )
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: "/bin/cp")
        copy.arguments = ["-a", remote.path("original.txt"), remote.path("copy.txt")]
        try copy.run()
        copy.waitUntilExit()
        XCTAssertEqual(copy.terminationStatus, 0)
        XCTAssertEqual(
            try StoredAttributes.read(FilePath(remote.path("copy.txt"))).id?.rawValue,
            original.id.rawValue, "cp -a should have copied the id xattr (test premise)"
        )

        let items = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(items.count, 2)
        XCTAssertEqual(items.first { $0.name == "original.txt" }?.id, original.id)
        let copied = try XCTUnwrap(items.first { $0.name == "copy.txt" })
        XCTAssertNotEqual(copied.id, original.id)
    }

    func testSymlinkIDsSurviveRenamesAndRestarts() async throws {
        let provider = try remote.provider()
        let link = try await provider.createItem(
            remote.template("link", kind: .symlink, symlinkTarget: "target.txt"), contents: nil
        )
        XCTAssertEqual(link.kind, .symlink)
        XCTAssertEqual(link.symlinkTarget, "target.txt")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: remote.path("link")), "target.txt")

        try FileManager.default.moveItem(atPath: remote.path("link"), toPath: remote.path("renamed link"))
        try FileManager.default.createSymbolicLink(atPath: remote.path("by hand"), withDestinationPath: "/etc/hostname")
        let items = try await LocalProvider(root: remote.root).enumerateItems(in: .drive).items
        XCTAssertEqual(items.first { $0.name == "renamed link" }?.id, link.id)
        let byHand = try XCTUnwrap(items.first { $0.name == "by hand" })
        XCTAssertEqual(byHand.symlinkTarget, "/etc/hostname")

        let later = try await LocalProvider(root: remote.root).enumerateItems(in: .drive).items
        XCTAssertEqual(later.first { $0.name == "by hand" }?.id, byHand.id)

        let moved = try await provider.modifyItem(
            link.id, in: .drive, baseVersion: link.version,
            changes: RemoteItemChanges(container: TemporaryRemote.notes.id, parentID: .some(nil)), contents: nil
        )
        XCTAssertEqual(moved.container, TemporaryRemote.notes.id)
        let inNotes = try await LocalProvider(root: remote.root).enumerateItems(in: TemporaryRemote.notes.id).items
        XCTAssertEqual(inNotes.first { $0.name == "renamed link" }?.id, link.id)
    }

    func testInternalAndUnstorableEntriesAreSkipped() async throws {
        try remote.writeByHand("partial", to: ".folio-upload-leftover")
        try remote.writeByHand("a dotfile is a document too", to: ".hidden-note")
        XCTAssertEqual(mkfifo(remote.path("pipe"), 0o644), 0)
        let items = try await remote.provider().enumerateItems(in: .drive).items
        XCTAssertEqual(items.map(\.name), [".hidden-note"])
    }

    // MARK: Index

    func testItemsMovedByHandAreFoundAgain() async throws {
        let provider = try remote.provider()
        let folderA = try await provider.createItem(remote.template("A", kind: .directory, mode: 0o755), contents: nil)
        let folderB = try await provider.createItem(remote.template("B", kind: .directory, mode: 0o755), contents: nil)
        let file = try await provider.createItem(
            remote.template("f.txt", parentID: folderA.id), contents: try remote.contentFile("content")
        )
        try FileManager.default.moveItem(atPath: remote.path("A/f.txt"), toPath: remote.path("B/g.txt"))

        let destination = try remote.destination()
        let fetched = try await provider.fetchContents(
            of: file.id, in: .drive, version: file.version, to: destination
        ) { _ in }
        XCTAssertEqual(fetched.name, "g.txt")
        XCTAssertEqual(fetched.parentID, folderB.id)
        let renamed = try await provider.modifyItem(
            file.id, in: .drive, baseVersion: file.version, changes: RemoteItemChanges(name: "h.txt"), contents: nil
        )
        XCTAssertEqual(renamed.parentID, folderB.id)
        XCTAssertTrue(FileManager.default.fileExists(atPath: remote.path("B/h.txt")))
    }

    func testRestrictiveModesAreReportedButTheProviderKeepsAccess() async throws {
        let provider = try remote.provider()
        let folder = try await provider.createItem(
            remote.template("Read only", kind: .directory, mode: 0o555), contents: nil
        )
        XCTAssertEqual(folder.mode, 0o555)
        let child = try await provider.createItem(
            remote.template("child.txt", parentID: folder.id, mode: 0o444), contents: try remote.contentFile("c")
        )
        XCTAssertEqual(child.mode, 0o444)
        let changed = try await provider.modifyItem(
            child.id, in: .drive, baseVersion: child.version, changes: RemoteItemChanges(),
            contents: try remote.contentFile("d")
        )
        XCTAssertEqual(changed.mode, 0o444)

        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: remote.path("Read only"))
        let listed = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(listed.first { $0.id == folder.id }?.mode, 0o700, "a chmod by hand is reported as it is")
    }

    func testConcurrentCreatesOfOneItemMakeOneItem() async throws {
        let provider = try remote.provider()
        let template = remote.template("raced.txt")
        let content = try remote.contentFile("raced")
        let ids = try await withThrowingTaskGroup(of: ItemID.self) { group in
            for _ in 0..<8 {
                group.addTask { try await provider.createItem(template, contents: content).id }
            }
            return try await group.reduce(into: Set<ItemID>()) { $0.insert($1) }
        }
        XCTAssertEqual(ids, [template.id])
        let items = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(items.map(\.name), ["raced.txt"])
    }

    func testContentAndRenameInOneModifyHappenTogetherOrNotAtAll() async throws {
        let provider = try remote.provider()
        let file = try await provider.createItem(remote.template("a.txt"), contents: try remote.contentFile("1"))
        let both = try await provider.modifyItem(
            file.id, in: .drive, baseVersion: file.version, changes: RemoteItemChanges(name: "b.txt"),
            contents: try remote.contentFile("22")
        )
        XCTAssertEqual(both.name, "b.txt")
        XCTAssertEqual(both.size, 2)
        do {
            _ = try await provider.modifyItem(
                file.id, in: .drive, baseVersion: file.version, changes: RemoteItemChanges(name: "c.txt"),
                contents: try remote.contentFile("333")
            )
            XCTFail("a stale content change went through")
        } catch FolioError.conflict {}
        XCTAssertTrue(FileManager.default.fileExists(atPath: remote.path("b.txt")), "the refused change renamed")
        XCTAssertEqual(try String(contentsOfFile: remote.path("b.txt"), encoding: .utf8), "22")
    }

    func testCancelledUploadLeavesNothing() async throws {
        let slow = try remote.provider(NetworkSimulation(bandwidthBytesPerSecond: 256 << 10))
        let template = remote.template("big.bin")
        let content = try remote.contentFile([UInt8](repeating: 7, count: 4 << 20))
        let upload = Task { try await slow.createItem(template, contents: content) }
        try await Task.sleep(for: .milliseconds(300))
        upload.cancel()
        do {
            _ = try await upload.value
            XCTFail("a cancelled upload completed")
        } catch FolioError.interrupted {}
        let items = try await remote.provider().enumerateItems(in: .drive).items
        XCTAssertEqual(items, [])
        let staged = try FileManager.default.contentsOfDirectory(atPath: remote.root.appending(".folio/staging").string)
        XCTAssertEqual(staged, [])
    }

    func testABatchOfCreatesSharesTwoFlushesAndLeavesNothingStaged() async throws {
        let provider = try remote.provider()
        var creations = try (0..<40).map { index in
            ItemCreation(remote.template("f\(index).txt"), contents: try remote.contentFile("content \(index)"))
        }
        creations.append(ItemCreation(remote.template("orphan.txt", parentID: .generate()), contents: nil))
        let flushesBefore = provider.diskFlush.flushCount
        let outcomes = await provider.createItems(creations)
        XCTAssertEqual(provider.diskFlush.flushCount - flushesBefore, 2, "contents once, then names once")
        XCTAssertEqual(outcomes.filter { (try? $0.get()) != nil }.count, 40)
        guard case .failure(.notFound) = outcomes[40] else { return XCTFail("orphan: \(outcomes[40])") }
        XCTAssertEqual(try String(contentsOfFile: remote.path("f7.txt"), encoding: .utf8), "content 7")
        let staged = try FileManager.default.contentsOfDirectory(atPath: remote.root.appending(".folio/staging").string)
        XCTAssertEqual(staged, [])
    }

    func testABatchWhoseReplyIsLostIsMadeOnceAndFoundByItsRetry() async throws {
        let creations = try (0..<5).map { index in
            ItemCreation(remote.template("f\(index).txt"), contents: try remote.contentFile("content \(index)"))
        }
        let lost = await (try remote.provider(NetworkSimulation(lostReplyRate: 1))).createItems(creations)
        for outcome in lost {
            guard case .failure(.providerFailure(_, retryable: true)) = outcome else {
                return XCTFail("a lost reply answered \(outcome)")
            }
        }
        let retried = try await remote.provider().createItems(creations).map { try $0.get() }
        XCTAssertEqual(retried.map(\.id), creations.map(\.template.id))
        let items = try await remote.provider().enumerateItems(in: .drive).items
        XCTAssertEqual(items.map(\.name).sorted(), (0..<5).map { "f\($0).txt" })
    }

    func testFailedCreateLeavesNothing() async throws {
        let provider = try remote.provider()
        let orphan = remote.template("orphan.txt", parentID: .generate())
        do {
            _ = try await provider.createItem(orphan, contents: try remote.contentFile("o"))
            XCTFail("create in a missing folder succeeded")
        } catch FolioError.notFound {}
        let file = try await provider.createItem(remote.template("file"), contents: try remote.contentFile("f"))
        do {
            _ = try await provider.createItem(remote.template("inside", parentID: file.id), contents: nil)
            XCTFail("create inside a file succeeded")
        } catch FolioError.notDirectory {}
        let items = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(items.map(\.name), ["file"])
        let staged = try FileManager.default.contentsOfDirectory(atPath: remote.root.appending(".folio/staging").string)
        XCTAssertEqual(staged, [])
    }
}
