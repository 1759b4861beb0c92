import FolioCore
import Foundation
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
        _ = try core.fileSystem.makeDirectory(parent: try core.ino("Docs"), name: "Final", permissions: 0o755, context: context)
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
        XCTAssertThrowsError(try core.fileSystem.makeDirectory(parent: app, name: "ref.txt", permissions: 0o755, context: context)) {
            XCTAssertEqual($0 as? FolioError, .exists("ref.txt"))
        }
        _ = try core.fileSystem.makeDirectory(parent: app, name: "Inbox", permissions: 0o755, context: context)
        try core.fileSystem.rename(
            parent: app, name: "ref.txt", newParent: try core.ino("App/Inbox"), newName: "moved.txt", flags: [])
        XCTAssertEqual(try core.list("App/Inbox"), ["moved.txt"])
        XCTAssertEqual(try core.ino("App/Inbox/moved.txt"), original)
        XCTAssertEqual(try core.list("Docs"), ["report.txt"], "moving a reference leaves the item where it is")

        // A file renamed over a reference replaces the reference, not the item it opened.
        try await core.write("App/Inbox/new.txt", "another document")
        try core.fileSystem.rename(
            parent: try core.ino("App/Inbox"), name: "new.txt", newParent: try core.ino("App/Inbox"),
            newName: "moved.txt", flags: [])
        let replaced = try await core.read("App/Inbox/moved.txt")
        XCTAssertEqual(replaced, "another document")
        let kept = try await core.read("Docs/report.txt")
        XCTAssertEqual(kept, "first draft")
        XCTAssertEqual(try core.fileSystem.getAttributes(original).linkCount, 1)
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
}
