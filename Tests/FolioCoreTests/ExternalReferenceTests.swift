import FolioCore
import FolioTesting
import Foundation
import Logging
import SystemPackage
import XCTest

/// One item reachable at several paths: external references open the original in place and follow it.
final class ExternalReferenceTests: XCTestCase {
    /// A harness with `Docs/report.txt` (the original) and an empty `App` folder (where the reference goes).
    private func makeCore() async throws -> CoreHarness {
        let core = try CoreHarness()
        for folder in ["Docs", "App"] {
            _ = try core.fileSystem.makeDirectory(
                parent: FolioFileSystem.rootIno, name: folder, permissions: 0o755, context: CoreHarness.context())
        }
        try await core.write("Docs/report.txt", "first draft")
        return core
    }

    func testReferenceOpensTheOriginalInPlace() async throws {
        let core = try await makeCore()
        let original = try core.ino("Docs/report.txt")
        let generation = try XCTUnwrap(core.fileSystem.node(original)).generation
        let attributes = try core.fileSystem.addReference(to: original, parent: try core.ino("App"), name: "report.txt")
        XCTAssertEqual(attributes.ino, original, "same inode")
        XCTAssertEqual(attributes.linkCount, 2)
        XCTAssertEqual(try core.ino("App/report.txt"), original)
        XCTAssertEqual(try core.fileSystem.lookup(parent: try core.ino("App"), name: "report.txt").ino, original)
        XCTAssertEqual(try core.list("App"), ["report.txt"])

        try await core.write("App/report.txt", "edited through the reference")
        let viaOriginal = try await core.read("Docs/report.txt")
        XCTAssertEqual(viaOriginal, "edited through the reference")
        XCTAssertEqual(
            core.fileSystem.node(original)?.state, .dirty(generation: generation + 1), "one item, one version history")
        XCTAssertEqual(try core.list("Docs"), ["report.txt"], "no copy was made")
    }

    func testReferenceFollowsRenamesMovesAndAtomicSaves() async throws {
        let core = try await makeCore()
        let original = try core.ino("Docs/report.txt")
        try core.fileSystem.addReference(to: original, parent: try core.ino("App"), name: "report.txt")
        let context = CoreHarness.context()
        _ = try core.fileSystem.makeDirectory(
            parent: try core.ino("Docs"), name: "Final", permissions: 0o755, context: context)
        try core.fileSystem.rename(
            parent: try core.ino("Docs"), name: "report.txt", newParent: try core.ino("Docs/Final"), newName: "r.txt",
            flags: [])
        XCTAssertEqual(try core.ino("App/report.txt"), original)

        // An editor's atomic save over the original: the item keeps its id, so the reference opens the new version.
        try await core.write("Docs/Final/.r.txt.swp", "saved by an editor")
        try core.fileSystem.rename(
            parent: try core.ino("Docs/Final"), name: ".r.txt.swp", newParent: try core.ino("Docs/Final"),
            newName: "r.txt", flags: [])
        let viaReference = try await core.read("App/report.txt")
        XCTAssertEqual(viaReference, "saved by an editor")
        XCTAssertEqual(try core.ino("App/report.txt"), try core.ino("Docs/Final/r.txt"))
    }

    func testRemovingTheReferenceKeepsTheItemAndRemovingTheItemRemovesReferences() async throws {
        let core = try await makeCore()
        let original = try core.ino("Docs/report.txt")
        let app = try core.ino("App")
        let pending = core.fileSystem.pendingUploadCount
        try core.fileSystem.addReference(to: original, parent: app, name: "a.txt")
        try core.fileSystem.addReference(to: original, parent: app, name: "b.txt")
        XCTAssertEqual(try core.fileSystem.getAttributes(original).linkCount, 3)
        try core.fileSystem.unlink(parent: app, name: "a.txt")
        XCTAssertEqual(try core.list("App"), ["b.txt"])
        XCTAssertEqual(try core.list("Docs"), ["report.txt"], "unlinking a reference never removes the item")
        XCTAssertEqual(try core.fileSystem.getAttributes(original).linkCount, 2)
        XCTAssertEqual(core.fileSystem.pendingUploadCount, pending, "references are never uploaded")

        try core.fileSystem.unlink(parent: try core.ino("Docs"), name: "report.txt")
        XCTAssertEqual(try core.list("App"), [], "the item is gone, so is its reference")
        XCTAssertThrowsError(try core.fileSystem.lookup(parent: app, name: "b.txt"))
        XCTAssertNoThrow(try core.fileSystem.removeDirectory(parent: FolioFileSystem.rootIno, name: "App"))
    }

    func testReferencesAreRenamedReplacedAndCountAsEntries() async throws {
        let core = try await makeCore()
        let original = try core.ino("Docs/report.txt")
        let app = try core.ino("App")
        let context = CoreHarness.context()
        try core.fileSystem.addReference(to: original, parent: app, name: "ref.txt")
        XCTAssertThrowsError(try core.fileSystem.removeDirectory(parent: FolioFileSystem.rootIno, name: "App")) {
            XCTAssertEqual($0 as? FolioError, .notEmpty("App"))
        }
        XCTAssertThrowsError(
            try core.fileSystem.makeDirectory(parent: app, name: "ref.txt", permissions: 0o755, context: context)
        ) {
            XCTAssertEqual($0 as? FolioError, .exists("ref.txt"))
        }
        _ = try core.fileSystem.makeDirectory(parent: app, name: "Inbox", permissions: 0o755, context: context)
        try core.fileSystem.rename(
            parent: app, name: "ref.txt", newParent: try core.ino("App/Inbox"), newName: "moved.txt", flags: [])
        XCTAssertEqual(try core.list("App/Inbox"), ["moved.txt"])
        XCTAssertEqual(try core.ino("App/Inbox/moved.txt"), original)
        XCTAssertEqual(try core.list("Docs"), ["report.txt"], "moving a reference leaves the item where it is")

        // A file renamed over a reference is an atomic save of the document it opens (an app saving a granted
        // document): the document gets the content where it is, as the same item; the reference stays.
        let item = try XCTUnwrap(core.fileSystem.identity(of: original)?.item)
        try await core.write("App/Inbox/new.txt", "saved by the app")
        try core.fileSystem.rename(
            parent: try core.ino("App/Inbox"), name: "new.txt", newParent: try core.ino("App/Inbox"),
            newName: "moved.txt", flags: [])
        XCTAssertEqual(try core.list("App/Inbox"), ["moved.txt"])
        XCTAssertEqual(try core.list("Docs"), ["report.txt"])
        let saved = try await core.read("Docs/report.txt")
        XCTAssertEqual(saved, "saved by the app")
        let throughReference = try await core.read("App/Inbox/moved.txt")
        XCTAssertEqual(throughReference, "saved by the app")
        let document = try core.ino("Docs/report.txt")
        XCTAssertEqual(try core.ino("App/Inbox/moved.txt"), document, "one inode at both names")
        XCTAssertEqual(core.fileSystem.identity(of: document)?.item, item, "the same item")
        XCTAssertEqual(core.fileSystem.node(document)?.container, .drive, "still in its container")
        XCTAssertEqual(try core.fileSystem.getAttributes(document).linkCount, 2)

        // Removing the reference first and then renaming makes the file the app's own.
        try core.fileSystem.unlink(parent: try core.ino("App/Inbox"), name: "moved.txt")
        try await core.write("App/Inbox/own.txt", "the app's own")
        try core.fileSystem.rename(
            parent: try core.ino("App/Inbox"), name: "own.txt", newParent: try core.ino("App/Inbox"),
            newName: "moved.txt", flags: [])
        let own = try await core.read("App/Inbox/moved.txt")
        XCTAssertEqual(own, "the app's own")
        let kept = try await core.read("Docs/report.txt")
        XCTAssertEqual(kept, "saved by the app")
        XCTAssertEqual(try core.fileSystem.getAttributes(document).linkCount, 1)
    }

    func testReferencesSurviveRemount() async throws {
        let core = try await makeCore()
        let original = try core.ino("Docs/report.txt")
        try core.fileSystem.addReference(to: original, parent: try core.ino("App"), name: "report.txt")
        try core.remount()
        XCTAssertEqual(try core.ino("App/report.txt"), original)
        XCTAssertEqual(try core.fileSystem.getAttributes(original).linkCount, 2)
        try core.fileSystem.unlink(parent: try core.ino("App"), name: "report.txt")
        try core.remount()
        XCTAssertEqual(try core.list("App"), [])
    }

    func testBadReferencesAreRefusedAndChangeNothing() async throws {
        let core = try await makeCore()
        let original = try core.ino("Docs/report.txt")
        let app = try core.ino("App")
        XCTAssertThrowsError(try core.fileSystem.addReference(to: app, parent: app, name: "loop")) {
            guard case .invalidArgument? = $0 as? FolioError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try core.fileSystem.addReference(to: original, parent: original, name: "x")) {
            guard case .notDirectory? = $0 as? FolioError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try core.fileSystem.addReference(to: original, parent: app, name: "a/b")) {
            guard case .invalidArgument? = $0 as? FolioError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try core.fileSystem.addReference(to: 999_999, parent: app, name: "x")) {
            guard case .notFound? = $0 as? FolioError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(
            try core.fileSystem.addReference(to: original, parent: FolioFileSystem.rootIno, name: "Docs")
        ) {
            XCTAssertEqual($0 as? FolioError, .exists("Docs"))
        }
        XCTAssertEqual(try core.list("App"), [])
        XCTAssertEqual(try core.fileSystem.getAttributes(original).linkCount, 1)
    }

    func testAtomicSaveOverAGrantedDocumentTellsTheKernelWhereTheReferenceLeadsNow() async throws {
        let core = try await makeCore()
        let invalidations = RecordingInvalidator()
        core.fileSystem.connect(materializer: nil, uploader: nil, invalidator: invalidations)
        let app = try core.ino("App")
        try core.fileSystem.addReference(to: try core.ino("Docs/report.txt"), parent: app, name: "report.txt")
        try await core.write("Docs/.report.tmp", "saved atomically")
        invalidations.clear()
        try core.fileSystem.rename(
            parent: try core.ino("Docs"), name: ".report.tmp", newParent: try core.ino("Docs"), newName: "report.txt",
            flags: [])
        XCTAssertEqual(try core.ino("App/report.txt"), try core.ino("Docs/report.txt"))
        XCTAssertTrue(
            invalidations.entries.contains { $0.parent == app && $0.name == "report.txt" },
            "the kernel's entry for the reference still names the replaced inode: \(invalidations.entries)")
        let viaReference = try await core.read("App/report.txt")
        XCTAssertEqual(viaReference, "saved atomically")
    }

    func testGrantedTemporaryFileSavedOverADocumentKeepsItsReference() async throws {
        let core = try await makeCore()
        let app = try core.ino("App")
        try await core.write("Docs/draft.tmp", "new content")
        try core.fileSystem.addReference(to: try core.ino("Docs/draft.tmp"), parent: app, name: "draft.txt")
        try core.fileSystem.rename(
            parent: try core.ino("Docs"), name: "draft.tmp", newParent: try core.ino("Docs"), newName: "report.txt",
            flags: [])
        XCTAssertEqual(try core.ino("App/draft.txt"), try core.ino("Docs/report.txt"), "it follows its content")
        XCTAssertEqual(try core.fileSystem.getAttributes(try core.ino("Docs/report.txt")).linkCount, 2)
        try core.remount()
        XCTAssertEqual(try core.ino("App/draft.txt"), try core.ino("Docs/report.txt"))
        try core.fileSystem.unlink(parent: try core.ino("App"), name: "draft.txt")
        XCTAssertNoThrow(try core.fileSystem.removeDirectory(parent: FolioFileSystem.rootIno, name: "App"))
    }

    func testReferenceRenamedOverAnotherReferenceReplacesItAndSurvivesRemount() async throws {
        let core = try await makeCore()
        try await core.write("Docs/other.txt", "other")
        let app = try core.ino("App")
        let report = try core.ino("Docs/report.txt")
        let other = try core.ino("Docs/other.txt")
        try core.fileSystem.addReference(to: report, parent: app, name: "a.txt")
        try core.fileSystem.addReference(to: other, parent: app, name: "b.txt")
        try core.fileSystem.rename(parent: app, name: "a.txt", newParent: app, newName: "b.txt", flags: [])
        XCTAssertEqual(try core.list("App"), ["b.txt"])
        XCTAssertEqual(try core.fileSystem.getAttributes(other).linkCount, 1, "the replaced reference is gone")
        try core.remount()
        XCTAssertEqual(try core.list("App"), ["b.txt"])
        XCTAssertEqual(try core.ino("App/b.txt"), report)
    }

    func testRemoteDeleteOfAFolderTakesTheReferencesInIt() async throws {
        let core = try CoreHarness()
        let folder = RemoteItem(
            id: ItemID("remote-folder"), container: .drive, parentID: nil, name: "Shared", kind: .directory, size: 0,
            modificationTime: .now(), mode: 0o755, version: "r1")
        try core.fileSystem.applyEnumeration(of: .drive, items: [folder])
        try await core.write("doc.txt", "doc")
        try core.fileSystem.addReference(to: try core.ino("doc.txt"), parent: try core.ino("Shared"), name: "doc.txt")
        try core.fileSystem.applyEnumeration(of: .drive, items: [], epoch: core.fileSystem.remoteEpoch())
        XCTAssertThrowsError(try core.ino("Shared"), "the remote deleted the folder")
        XCTAssertEqual(try core.fileSystem.getAttributes(try core.ino("doc.txt")).linkCount, 1)
        try core.remount()
        XCTAssertThrowsError(try core.ino("Shared"))
    }

    func testGrantFailsCleanlyWhileTheStoreFails() async throws {
        let store = InMemoryMetadataStore()
        let directory = NSTemporaryDirectory() + "folio-ref-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fileSystem = try FolioFileSystem(
            store: store, cache: try ContentCache(directory: FilePath(directory)), logger: Logger(label: "test"))
        let context = CoreHarness.context()
        let folder = try fileSystem.makeDirectory(parent: 1, name: "App", permissions: 0o755, context: context)
        let (file, handle) = try fileSystem.createFile(
            parent: 1, name: "doc.txt", permissions: 0o644, flags: O_WRONLY, context: context)
        try fileSystem.release(handle)
        try fileSystem.addReference(to: file.ino, parent: folder.ino, name: "kept.txt")
        fileSystem.flushDeferredWrites()
        store.failApplies(with: .noSpace("disk full"))
        XCTAssertThrowsError(try fileSystem.addReference(to: file.ino, parent: folder.ino, name: "new.txt")) {
            XCTAssertEqual($0 as? FolioError, .noSpace("disk full"))
        }
        XCTAssertThrowsError(try fileSystem.unlink(parent: folder.ino, name: "kept.txt"))
        XCTAssertThrowsError(try fileSystem.rename(
            parent: folder.ino, name: "kept.txt", newParent: folder.ino, newName: "moved.txt", flags: []))
        XCTAssertNoThrow(try fileSystem.lookup(parent: folder.ino, name: "kept.txt"), "nothing changed")
        XCTAssertThrowsError(try fileSystem.lookup(parent: folder.ino, name: "new.txt"))
        XCTAssertThrowsError(try fileSystem.lookup(parent: folder.ino, name: "moved.txt"))
        XCTAssertEqual(try fileSystem.getAttributes(file.ino).linkCount, 2)
    }
}

/// Records the invalidations the core asks for.
final class RecordingInvalidator: KernelCacheInvalidator, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [(parent: UInt64, name: String)] = []
    private var recordedInodes: [UInt64] = []

    var entries: [(parent: UInt64, name: String)] { lock.withLock { recorded } }

    var inodes: [UInt64] { lock.withLock { recordedInodes } }

    func clear() {
        lock.withLock {
            recorded.removeAll()
            recordedInodes.removeAll()
        }
    }

    func invalidateInode(_ ino: UInt64) {
        lock.withLock { recordedInodes.append(ino) }
    }

    func invalidateEntry(parent: UInt64, name: String) {
        lock.withLock { recorded.append((parent, name)) }
    }
}
