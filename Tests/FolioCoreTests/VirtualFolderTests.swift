import FolioCore
import Foundation
import XCTest

/// `.Recents/` and `.Tags/<tag>/`: computed folders whose entries are the documents themselves.
final class VirtualFolderTests: XCTestCase {
    private func tag(_ core: CoreHarness, _ path: String, _ tags: String) throws {
        try core.fileSystem.setExtendedAttribute(
            try core.ino(path), name: VirtualFolder.tagsAttribute, value: Array(tags.utf8), mustCreate: false,
            mustReplace: false)
    }

    private func folder(_ core: CoreHarness, _ parent: UInt64, _ name: String) throws -> UInt64 {
        try core.fileSystem.lookup(parent: parent, name: name).ino
    }

    func testTagFoldersListTaggedDocumentsInPlace() async throws {
        let core = try CoreHarness()
        _ = try core.fileSystem.makeDirectory(
            parent: FolioFileSystem.rootIno, name: "Work", permissions: 0o755, context: CoreHarness.context())
        try await core.write("Work/plan.txt", "plan")
        try await core.write("plan.txt", "another plan")
        try await core.write("notes.txt", "notes")
        try tag(core, "Work/plan.txt", "red, urgent")
        try tag(core, "plan.txt", "red")
        XCTAssertEqual(
            try core.list("", includingVirtual: true), [".Recents", ".Tags", "Work", "notes.txt", "plan.txt"])

        let tags = try folder(core, FolioFileSystem.rootIno, ".Tags")
        XCTAssertEqual(try core.list(ino: tags), ["red", "urgent"])
        let red = try folder(core, tags, "red")
        XCTAssertEqual(try core.list(ino: red), ["plan (2).txt", "plan.txt"], "same names are told apart")
        let entry = try core.fileSystem.lookup(parent: red, name: "plan.txt")
        XCTAssertEqual(entry.ino, try core.ino("Work/plan.txt"), "the document itself, not a copy")
        XCTAssertTrue(entry.isVolatileEntry, "the kernel must not keep names of virtual folders")

        // Taking the tag away takes the document out of the folder, and the empty tag out of .Tags.
        try core.fileSystem.removeExtendedAttribute(try core.ino("plan.txt"), name: VirtualFolder.tagsAttribute)
        try tag(core, "Work/plan.txt", "urgent")
        XCTAssertEqual(try core.list(ino: tags), ["urgent"])
        XCTAssertThrowsError(try core.fileSystem.lookup(parent: tags, name: "red"))
    }

    func testRecentsListsDocumentsUsedLastAndSurviveRemount() async throws {
        let core = try CoreHarness()
        try await core.write("old.txt", "old")
        try await core.write("new.txt", "new")
        let recents = try folder(core, FolioFileSystem.rootIno, ".Recents")
        XCTAssertEqual(Set(try core.list(ino: recents)), ["old.txt", "new.txt"])
        XCTAssertEqual(try core.fileSystem.lookup(parent: recents, name: "new.txt").ino, try core.ino("new.txt"))
        try core.remount()
        let again = try folder(core, FolioFileSystem.rootIno, ".Recents")
        XCTAssertEqual(Set(try core.list(ino: again)), ["old.txt", "new.txt"], "recents are kept in the store")
        try core.fileSystem.unlink(parent: FolioFileSystem.rootIno, name: "old.txt")
        XCTAssertEqual(try core.list(ino: again), ["new.txt"], "a deleted document leaves Recents")
    }

    func testVirtualFoldersAreReadOnly() async throws {
        let core = try CoreHarness()
        try await core.write("doc.txt", "doc")
        try tag(core, "doc.txt", "blue")
        let context = CoreHarness.context()
        let tags = try folder(core, FolioFileSystem.rootIno, ".Tags")
        let blue = try folder(core, tags, "blue")
        let readOnly = FolioError.readOnly(
            "virtual folders (.Recents, .Tags) are read-only: change the documents where they are")
        XCTAssertThrowsError(
            try core.fileSystem.makeDirectory(parent: tags, name: "green", permissions: 0o755, context: context)
        ) {
            XCTAssertEqual($0 as? FolioError, readOnly)
        }
        XCTAssertThrowsError(try core.fileSystem.createFile(
            parent: blue, name: "new.txt", permissions: 0o644, flags: O_WRONLY, context: context)) {
            XCTAssertEqual($0 as? FolioError, readOnly)
        }
        XCTAssertThrowsError(try core.fileSystem.unlink(parent: blue, name: "doc.txt")) {
            XCTAssertEqual($0 as? FolioError, readOnly)
        }
        XCTAssertThrowsError(try core.fileSystem.rename(
            parent: blue, name: "doc.txt", newParent: FolioFileSystem.rootIno, newName: "moved.txt", flags: [])) {
            XCTAssertEqual($0 as? FolioError, readOnly)
        }
        XCTAssertThrowsError(try core.fileSystem.removeDirectory(parent: FolioFileSystem.rootIno, name: ".Tags")) {
            XCTAssertEqual($0 as? FolioError, readOnly)
        }
        XCTAssertThrowsError(try core.fileSystem.rename(
            parent: FolioFileSystem.rootIno, name: ".Recents", newParent: FolioFileSystem.rootIno, newName: "R",
            flags: [])) {
            XCTAssertEqual($0 as? FolioError, readOnly)
        }
        XCTAssertTrue(try core.fileSystem.lookup(parent: tags, name: "blue").isVolatileEntry, "tag folders come and go")
        XCTAssertThrowsError(
            try core.fileSystem.setAttributesNow(tags, AttributeChanges(permissions: 0o777), handle: nil)
        ) {
            XCTAssertEqual($0 as? FolioError, readOnly)
        }
        XCTAssertEqual(try core.list(""), ["doc.txt"], "nothing changed")
        XCTAssertEqual(try core.list(ino: blue), ["doc.txt"])
    }

    func testAnItemNamedLikeAVirtualFolderWins() async throws {
        let core = try CoreHarness()
        _ = try core.fileSystem.makeDirectory(
            parent: FolioFileSystem.rootIno, name: ".Tags", permissions: 0o755, context: CoreHarness.context())
        XCTAssertEqual(try core.list("", includingVirtual: true), [".Recents", ".Tags"])
        let real = try core.fileSystem.lookup(parent: FolioFileSystem.rootIno, name: ".Tags")
        XCTAssertFalse(VirtualFolder.isVirtual(real.ino))
    }
}
