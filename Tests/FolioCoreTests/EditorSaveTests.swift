@testable import FolioCore
import FolioTesting
import Foundation
import Synchronization
import XCTest

/// Editors' saves that move a document away from its name (or remove it) and write a new file there: the new
/// file takes the document over (DESIGN.md §2 "Coordination"), and the provider sees one modification.
final class EditorSaveTests: XCTestCase {
    private let editor = CoreHarness.context(7)

    /// An uploaded document `doc.txt` (provider version v1) tagged `red`.
    private func taggedDocument(_ core: CoreHarness) async throws -> ItemID {
        let template = try await core.uploadedDocument("doc.txt", "one")
        try core.fileSystem.setExtendedAttribute(
            try core.ino("doc.txt"), name: "user.xdg.tags", value: Array("red".utf8), mustCreate: false,
            mustReplace: false)
        // The tags travel (issue 16): their update goes and lands, so the document is clean again.
        let work = core.fileSystem.nextUploadWork(limit: 4)
        XCTAssertEqual(work.count, 1, "\(work.map(\.summary))")
        for item in work {
            guard case .modify(_, let itemID, let container, _, let changes, nil, _, _) = item, let tags = changes.tags
            else {
                XCTFail("only the tags' update: \(item.summary)")
                continue
            }
            core.fileSystem.finishUpload(item, result: .success(RemoteItem(
                id: itemID, container: container, parentID: nil, name: "doc.txt", kind: .file, size: 3,
                modificationTime: .now(), mode: template.mode, version: "v1", tags: tags.tags)))
        }
        core.fileSystem.flushDeferredWrites()
        return template.id
    }

    private func node(_ core: CoreHarness, _ path: String) throws -> Node {
        try XCTUnwrap(core.fileSystem.node(try core.ino(path)), path)
    }

    /// The one piece of upload work there is: a modification of `itemID` from v1 with new content.
    private func expectOneModification(
        _ core: CoreHarness, of itemID: ItemID, file: StaticString = #filePath, line: UInt = #line
    ) {
        let work = core.fileSystem.nextUploadWork(limit: 10)
        defer { work.forEach { $0.closeContents() } }
        XCTAssertEqual(work.count, 1, "\(work.map(\.summary))", file: file, line: line)
        guard case .modify(_, let modified, _, let base, let changes, let contents, _, _)? = work.first else {
            return XCTFail("expected a modification: \(work.map(\.summary))", file: file, line: line)
        }
        XCTAssertEqual(modified, itemID, file: file, line: line)
        XCTAssertEqual(base, "v1", file: file, line: line)
        XCTAssertNotNil(contents, "the new content is sent", file: file, line: line)
        XCTAssertEqual(changes.name, "doc.txt", file: file, line: line)
    }

    /// vim (`backupcopy=no`, or `auto` deciding to rename) and Emacs: rename `f` to `f~`, create `f`, write,
    /// fsync, close; vim then removes `f~`.
    func testRenameAwayThenCreateBySameProcessKeepsTheDocument() async throws {
        let core = try CoreHarness()
        let id = try await taggedDocument(core)
        try core.fileSystem.addReference(to: try core.ino("doc.txt"), parent: 1, name: "granted.txt")
        try core.fileSystem.rename(
            parent: 1, name: "doc.txt", newParent: 1, newName: "doc.txt~", flags: [], context: editor)
        XCTAssertTrue(core.fileSystem.nextUploadWork(limit: 10).isEmpty, "the rename waits for the save")
        try await core.write("doc.txt", "two", process: editor.processID)

        let saved = try node(core, "doc.txt")
        XCTAssertEqual(saved.itemID, id, "the new file is the document")
        XCTAssertEqual(saved.remoteVersion, "v1")
        XCTAssertEqual(saved.xattrs["user.xdg.tags"], Array("red".utf8), "tags survive the save")
        let backup = try node(core, "doc.txt~")
        XCTAssertNotEqual(backup.itemID, id, "the backup is a new item")
        XCTAssertNil(backup.remoteVersion)
        let read = try await core.read("doc.txt")
        XCTAssertEqual(read, "two")
        XCTAssertEqual(try core.ino("granted.txt"), saved.ino, "the grant follows the document, not the backup")
        // One modification of the document; the backup's create waits for the window.
        expectOneModification(core, of: id)
        try core.fileSystem.unlink(parent: 1, name: "doc.txt~", context: editor)
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1, "removing the backup sends nothing")

        // Stored: a restart finds the document at its name with its identity.
        try core.remount()
        XCTAssertEqual(try node(core, "doc.txt").itemID, id)
        XCTAssertEqual(try core.list(""), ["doc.txt", "granted.txt"])
        XCTAssertEqual(try core.ino("granted.txt"), try core.ino("doc.txt"))
    }

    /// Unlink and create again (and vim's backup deleted before the new file is written).
    func testRemoveThenCreateBySameProcessKeepsTheDocument() async throws {
        let core = try CoreHarness()
        let id = try await taggedDocument(core)
        try core.fileSystem.addReference(
            to: try core.ino("doc.txt"), parent: 1, name: "granted.txt")
        try core.fileSystem.unlink(parent: 1, name: "doc.txt", context: editor)
        XCTAssertTrue(core.fileSystem.nextUploadWork(limit: 10).isEmpty, "the delete waits for the save")
        try await core.write("doc.txt", "two", process: editor.processID)

        let saved = try node(core, "doc.txt")
        XCTAssertEqual(saved.itemID, id)
        XCTAssertEqual(saved.xattrs["user.xdg.tags"], Array("red".utf8))
        XCTAssertEqual(try core.ino("granted.txt"), saved.ino, "the grant opens the document again")
        expectOneModification(core, of: id)
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1, "no delete left")
    }

    /// Emacs's first save in a session where `f~` exists from an earlier one (and vim with `backup`): `f` is
    /// renamed over the old backup, then written anew. Both keep their items; nothing is deleted or created.
    func testRenameOverTheOldBackupThenCreateKeepsBothItems() async throws {
        let core = try CoreHarness()
        let id = try await taggedDocument(core)
        let old = try await core.uploadedDocument("doc.txt~", "zero", version: "b1")
        try core.fileSystem.rename(
            parent: 1, name: "doc.txt", newParent: 1, newName: "doc.txt~", flags: [], context: editor)
        try await core.write("doc.txt", "two", process: editor.processID)

        XCTAssertEqual(try node(core, "doc.txt").itemID, id)
        XCTAssertEqual(try node(core, "doc.txt").xattrs["user.xdg.tags"], Array("red".utf8))
        XCTAssertEqual(try node(core, "doc.txt~").itemID, old.id, "the backup item keeps its id")
        let work = core.fileSystem.nextUploadWork(limit: 10)
        defer { work.forEach { $0.closeContents() } }
        var modified: Set<ItemID> = []
        for item in work {
            guard case .modify(_, let itemID, _, _, _, let contents, _, _) = item, contents != nil else {
                return XCTFail("only modifications with content: \(work.map(\.summary))")
            }
            modified.insert(itemID)
        }
        XCTAssertEqual(modified, [id, old.id])
    }

    /// `mv doc.txt doc.old && touch doc.txt` in a shell: two processes, a rename and a new document. The new
    /// file's create waits until the rename may go (the remote still has the old document at that name).
    func testAnotherProcessCreatingAtTheNameMakesANewDocument() async throws {
        let clock = ManualClock()
        let core = try CoreHarness(clock: clock)
        let id = try await taggedDocument(core)
        try core.fileSystem.rename(
            parent: 1, name: "doc.txt", newParent: 1, newName: "doc.old", flags: [], context: editor)
        try await core.write("doc.txt", "new", process: 8)
        XCTAssertNotEqual(try node(core, "doc.txt").itemID, id)
        XCTAssertEqual(try node(core, "doc.old").itemID, id)
        clock.advance(by: .milliseconds(2999))
        XCTAssertTrue(core.fileSystem.nextUploadWork(limit: 10).isEmpty, "both wait for the window")
        clock.advance(by: .milliseconds(1))
        let work = core.fileSystem.nextUploadWork(limit: 10)
        defer { work.forEach { $0.closeContents() } }
        XCTAssertEqual(work.count, 2, "\(work.map(\.summary))")
        guard case .modify(_, let renamed, _, _, let changes, _, _, _)? = work.first else {
            return XCTFail("the rename goes first: \(work.map(\.summary))")
        }
        XCTAssertEqual(renamed, id)
        XCTAssertEqual(changes.name, "doc.old")
        guard case .create(_, let template, _, _, _) = work[1] else { return XCTFail("then the create") }
        XCTAssertEqual(template.name, "doc.txt")
    }

    /// A file renamed to the name (LibreOffice-style temp files, when the document was moved away first) takes
    /// the document over as a created one does.
    func testRenameAwayThenRenameTempToTheNameKeepsTheDocument() async throws {
        let core = try CoreHarness()
        let id = try await taggedDocument(core)
        try await core.write("lu123.tmp", "two", process: editor.processID)
        try core.fileSystem.rename(
            parent: 1, name: "doc.txt", newParent: 1, newName: "doc.bak", flags: [], context: editor)
        try core.fileSystem.rename(
            parent: 1, name: "lu123.tmp", newParent: 1, newName: "doc.txt", flags: [], context: editor)
        XCTAssertEqual(try node(core, "doc.txt").itemID, id)
        XCTAssertEqual(try node(core, "doc.txt").xattrs["user.xdg.tags"], Array("red".utf8))
        try core.fileSystem.unlink(parent: 1, name: "doc.bak", context: editor)
        expectOneModification(core, of: id)
    }

    /// `rm -r` of a folder: a held delete keeps later deletes (the folder's) behind it, so a folder never goes
    /// before its files.
    func testDeletesAfterAHeldDeleteWaitBehindIt() async throws {
        let clock = ManualClock()
        let core = try CoreHarness(clock: clock)
        _ = try core.fileSystem.makeDirectory(parent: 1, name: "dir", permissions: 0o755, context: editor)
        let folder = try XCTUnwrap(core.fileSystem.nextUploadWork(limit: 10).first)
        let folderItem = try XCTUnwrap(core.completeCreate(folder, version: "d1"))
        _ = try await core.uploadedDocument("dir/doc.txt", "one")
        try core.fileSystem.unlink(parent: try core.ino("dir"), name: "doc.txt", context: editor)
        try core.fileSystem.removeDirectory(parent: 1, name: "dir")
        clock.advance(by: .milliseconds(2999))
        XCTAssertTrue(core.fileSystem.nextUploadWork(limit: 10).isEmpty, "the folder's delete waits too")
        clock.advance(by: .milliseconds(1))
        let work = core.fileSystem.nextUploadWork(limit: 10)
        XCTAssertEqual(work.count, 2, "\(work.map(\.summary))")
        guard case .delete(let first, _)? = work.first, case .delete(let second, _) = work[1] else {
            return XCTFail("two deletes: \(work.map(\.summary))")
        }
        XCTAssertNotEqual(first.itemID, second.itemID)
        XCTAssertEqual(second.itemID, folderItem.id, "the folder last")
    }

    /// A document moved into another folder is no save: a file the same process then creates at the old name
    /// is a new document, and a grant to the moved one keeps opening it.
    func testMoveToAnotherFolderThenCreateMakesANewDocument() async throws {
        let core = try CoreHarness(clock: ManualClock())
        let id = try await taggedDocument(core)
        _ = try core.fileSystem.makeDirectory(parent: 1, name: "archive", permissions: 0o755, context: editor)
        try core.fileSystem.addReference(to: try core.ino("doc.txt"), parent: 1, name: "granted.txt")
        try core.fileSystem.rename(
            parent: 1, name: "doc.txt", newParent: try core.ino("archive"), newName: "doc.txt", flags: [],
            context: editor)
        try await core.write("doc.txt", "unrelated", process: editor.processID)

        XCTAssertEqual(try node(core, "archive/doc.txt").itemID, id, "the moved file is the document")
        XCTAssertEqual(try node(core, "archive/doc.txt").xattrs["user.xdg.tags"], Array("red".utf8))
        XCTAssertNotEqual(try node(core, "doc.txt").itemID, id, "the new file is a new document")
        XCTAssertEqual(try core.ino("granted.txt"), try core.ino("archive/doc.txt"), "the grant stays")
        let granted = try await core.read("granted.txt")
        XCTAssertEqual(granted, "one")
    }

    // MARK: Another device's edit during a save

    /// An uploaded `doc.txt` (v1, pinned if asked) that the editor renamed to `doc.txt~` to save it, when
    /// another device's edit (v2) arrives with an enumeration; the content keeper then downloads what is
    /// pinned and not local.
    private func renamedWhenARemoteEditArrives(
        _ core: CoreHarness, pinned: Bool = false
    ) async throws -> RemoteItemTemplate {
        let template = try await core.uploadedDocument("doc.txt", "one")
        if pinned { try core.fileSystem.setPinned(try core.ino("doc.txt"), true) }
        try core.fileSystem.rename(
            parent: 1, name: "doc.txt", newParent: 1, newName: "doc.txt~", flags: [], context: editor)
        let edit = CoreHarness.remoteFile(template, size: 6, version: "v2")
        try core.fileSystem.applyEnumeration(of: .drive, items: [edit])
        for ino in core.fileSystem.pinnedPlaceholders() {
            let ticket = try XCTUnwrap(try core.fileSystem.beginMaterialization(ino))
            try Data("theirs".utf8).write(to: URL(fileURLWithPath: ticket.path.string))
            core.fileSystem.finishMaterialization(ticket, result: .success(edit))
        }
        return template
    }

    /// After the window: the save is one modification of the document from v1, the version this device had
    /// (no delete, nothing from v2: either loses the edit unseen). The provider, at v2, refuses it as a
    /// conflict, and the document is conflicted: both versions are kept.
    private func expectAConflictNotALoss(
        _ core: CoreHarness, clock: ManualClock, of template: RemoteItemTemplate, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        clock.advance(by: .seconds(3))
        let work = core.fileSystem.nextUploadWork(limit: 10)
        defer { work.forEach { $0.closeContents() } }
        XCTAssertEqual(work.count, 1, "\(work.map(\.summary))", file: file, line: line)
        guard case .modify(_, let modified, _, let base, let changes, let contents, _, _)? = work.first else {
            return XCTFail("expected a modification: \(work.map(\.summary))", file: file, line: line)
        }
        XCTAssertEqual(modified, template.id, file: file, line: line)
        XCTAssertEqual(base, "v1", "the version this device had", file: file, line: line)
        XCTAssertNotNil(contents, file: file, line: line)
        XCTAssertEqual(changes.name, "doc.txt", file: file, line: line)
        core.fileSystem.finishUpload(work[0], result: .failure(.conflict("the remote is at v2")))
        XCTAssertEqual(try node(core, "doc.txt").state, .conflicted, file: file, line: line)
        XCTAssertEqual(core.fileSystem.conflictedItems().map(\.itemID), [template.id], file: file, line: line)
    }

    /// vim: rename away, create, write, close, remove the backup, while another device's edit arrives.
    func testARemoteEditDuringASaveIsAConflict() async throws {
        let clock = ManualClock()
        let core = try CoreHarness(clock: clock)
        let refresher = CountingRefresher()
        core.fileSystem.connect(refresher: refresher)
        let template = try await renamedWhenARemoteEditArrives(core)
        try await core.write("doc.txt", "two", process: editor.processID)
        XCTAssertEqual(try node(core, "doc.txt").itemID, template.id, "the save keeps the document")
        try core.fileSystem.unlink(parent: 1, name: "doc.txt~", context: editor)
        try expectAConflictNotALoss(core, clock: clock, of: template)
        // The edit set aside during the save is asked for again when its window ends.
        core.fileSystem.saveWindowEnded()
        XCTAssertGreaterThan(refresher.count, 0)
    }

    /// The same with a pinned document, which the content keeper downloads again at once.
    func testARemoteEditDuringASaveOfAPinnedDocumentIsAConflict() async throws {
        let clock = ManualClock()
        let core = try CoreHarness(clock: clock)
        let template = try await renamedWhenARemoteEditArrives(core, pinned: true)
        try await core.write("doc.txt", "two", process: editor.processID)
        try core.fileSystem.unlink(parent: 1, name: "doc.txt~", context: editor)
        try expectAConflictNotALoss(core, clock: clock, of: template)
    }

    /// The same when the backup is removed before the new file is written.
    func testARemoteEditDuringASaveThatRemovesTheBackupFirstIsAConflict() async throws {
        let clock = ManualClock()
        let core = try CoreHarness(clock: clock)
        let template = try await renamedWhenARemoteEditArrives(core)
        try core.fileSystem.unlink(parent: 1, name: "doc.txt~", context: editor)
        try await core.write("doc.txt", "two", process: editor.processID)
        try expectAConflictNotALoss(core, clock: clock, of: template)
    }

    // MARK: The tracker (a value)

    private func departure(_ item: ItemID, process: Int32 = 7) -> SaveTracker.Departure {
        .init(itemID: item, processID: process, deadline: 0, xattrs: [:], pinned: false, references: [])
    }

    func testTrackerTakesOverOnlyWithinTheWindowAndForTheSameProcess() {
        var tracker = SaveTracker(window: .seconds(3))
        let item = ItemID.generate()
        let name = ExternalReference.Location(parent: 1, name: "f")
        let second: UInt64 = 1_000_000_000
        XCTAssertNil(tracker.recordDeparture(departure(item, process: 0), from: name, now: 0), "not a process")
        XCTAssertEqual(tracker.recordDeparture(departure(item), from: name, now: second), 4 * second)
        XCTAssertTrue(tracker.isHeld(item, now: 2 * second))
        XCTAssertTrue(tracker.isDeparted(name, now: 2 * second))
        XCTAssertNil(tracker.arrival(at: name, processID: 8, now: 2 * second), "another process")
        XCTAssertNil(tracker.arrival(at: .init(parent: 1, name: "g"), processID: 7, now: 2 * second))
        XCTAssertEqual(tracker.arrival(at: name, processID: 7, now: 2 * second)?.itemID, item)
        tracker.tookOver(item)
        XCTAssertFalse(tracker.isHeld(item, now: 2 * second))
        XCTAssertTrue(tracker.isEmpty)

        _ = tracker.recordDeparture(departure(item), from: name, now: 10 * second)
        XCTAssertFalse(tracker.isHeld(item, now: 13 * second), "the window ended")
        XCTAssertNil(tracker.arrival(at: name, processID: 7, now: 13 * second))
        XCTAssertTrue(tracker.isEmpty)
    }

    func testTrackerRemembersABoundedNumberOfDepartures() {
        var tracker = SaveTracker(window: .seconds(3), capacity: 2)
        let items = (0..<3).map { _ in ItemID.generate() }
        for (index, item) in items.enumerated() {
            _ = tracker.recordDeparture(
                departure(item), from: .init(parent: 1, name: "f\(index)"), now: UInt64(index + 1))
        }
        XCTAssertFalse(tracker.isHeld(items[0], now: 4), "the oldest departure was let go")
        XCTAssertNil(tracker.arrival(at: .init(parent: 1, name: "f0"), processID: 7, now: 4))
        XCTAssertTrue(tracker.isHeld(items[1], now: 4))
        XCTAssertTrue(tracker.isHeld(items[2], now: 4))
        let backup = ItemID.generate()
        _ = tracker.holdBackup(backup, now: 5)
        XCTAssertTrue(tracker.isHeld(backup, now: 6))
    }
}

/// Counts the refreshes the core asks for.
private final class CountingRefresher: RemoteRefreshing {
    private let refreshes = Mutex(0)

    var count: Int { refreshes.withLock { $0 } }

    func refreshSoon() { refreshes.withLock { $0 += 1 } }
}
