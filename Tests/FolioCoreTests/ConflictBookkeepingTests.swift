import FolioCore
import Foundation
import XCTest

/// The core's side of conflicts: detection by the enumeration, which conflicts the sync engine must look at
/// (a conflict waiting for the user costs nothing), and resolution.
final class ConflictBookkeepingTests: XCTestCase {
    private func item(version: String) -> RemoteItem {
        RemoteItem(
            id: ItemID("doc"), container: .drive, parentID: nil, name: "doc.txt", kind: .file, size: 6,
            modificationTime: Timestamp(seconds: 2000, nanoseconds: 0), mode: 0o644, version: version)
    }

    /// A clean, downloaded `doc.txt` at remote version `r1` with content `remote`.
    private func cleanDocument() throws -> CoreHarness {
        let core = try CoreHarness()
        try core.fileSystem.applyEnumeration(of: .drive, items: [item(version: "r1")])
        let ticket = try XCTUnwrap(try core.fileSystem.beginMaterialization(try core.ino("doc.txt")))
        try Data("remote".utf8).write(to: URL(fileURLWithPath: ticket.path.string))
        core.fileSystem.finishMaterialization(ticket, result: .success(item(version: "r1")))
        return core
    }

    /// Stores `content` as the downloaded remote side of `doc.txt` at `version`, as the sync engine does.
    private func keepRemote(_ core: CoreHarness, version: String, content: String) throws {
        let file = try core.fileSystem.newContentFile()
        try Data(content.utf8).write(to: URL(fileURLWithPath: file.path.string))
        try core.fileSystem.addConflictVersion(
            try core.ino("doc.txt"), remote: item(version: version), fileName: file.name)
    }

    func testOnlyNewConflictsAreLookedAtAndKeepRemoteResolves() async throws {
        let core = try cleanDocument()
        try await core.write("doc.txt", "local")
        XCTAssertTrue(core.fileSystem.conflictedItems().isEmpty)

        // The remote moved on while the local version waits for upload: a conflict to look at.
        try core.fileSystem.applyEnumeration(of: .drive, items: [item(version: "r2")])
        let ino = try core.ino("doc.txt")
        XCTAssertEqual(core.fileSystem.node(ino)?.state, .conflicted)
        XCTAssertEqual(core.fileSystem.conflictedItems().map(\.itemID), [ItemID("doc")])
        try keepRemote(core, version: "r2", content: "theirs")
        XCTAssertTrue(core.fileSystem.conflictedItems().isEmpty, "kept: nothing more to fetch while the user decides")
        try core.fileSystem.applyEnumeration(of: .drive, items: [item(version: "r2")])
        XCTAssertTrue(core.fileSystem.conflictedItems().isEmpty, "the same remote version again is nothing new")
        let versions = try core.fileSystem.versions(of: ino)
        XCTAssertEqual(versions.map(\.id), ["current", "r2"])
        XCTAssertEqual(versions.map(\.origin), ["local", "remote"])

        // The remote changes again: one more version to fetch.
        try core.fileSystem.applyEnumeration(of: .drive, items: [item(version: "r3")])
        XCTAssertEqual(core.fileSystem.conflictedItems().map(\.itemID), [ItemID("doc")])
        try keepRemote(core, version: "r3", content: "theirs again")
        XCTAssertEqual(try core.fileSystem.versions(of: ino).count, 3)

        // Conflicts survive a restart; resolving keeps the newest remote version.
        try core.remount()
        XCTAssertEqual(try core.fileSystem.versions(of: ino).count, 3)
        try core.fileSystem.resolveConflict(ino, keep: .remote)
        let resolved = try await core.read("doc.txt")
        XCTAssertEqual(resolved, "theirs again")
        XCTAssertEqual(core.fileSystem.node(ino)?.state, .materialized)
        XCTAssertEqual(core.fileSystem.node(ino)?.remoteVersion, "r3")
        XCTAssertThrowsError(try core.fileSystem.resolveConflict(ino, keep: .local)) {
            XCTAssertEqual($0 as? FolioError, .invalidArgument("doc.txt has no conflict versions"))
        }
    }

    func testKeepBothMakesASiblingAndKeepLocalUploadsOverTheRemote() async throws {
        let core = try cleanDocument()
        try await core.write("doc.txt", "local")
        try core.fileSystem.applyEnumeration(of: .drive, items: [item(version: "r2")])
        try keepRemote(core, version: "r2", content: "theirs")
        let ino = try core.ino("doc.txt")
        try core.fileSystem.resolveConflict(ino, keep: .both)
        let names = try core.list("")
        XCTAssertEqual(names.count, 2)
        let sibling = try XCTUnwrap(
            names.first { $0.hasPrefix("doc (conflict from the remote, ") && $0.hasSuffix(").txt") })
        let siblingContent = try await core.read(sibling)
        XCTAssertEqual(siblingContent, "theirs")
        let current = try await core.read("doc.txt")
        XCTAssertEqual(current, "local")
        guard case .dirty = core.fileSystem.node(ino)?.state else { return XCTFail("the local version is uploaded") }
        XCTAssertEqual(core.fileSystem.node(ino)?.remoteVersion, "r2", "uploaded over the remote version it saw")
    }
}
