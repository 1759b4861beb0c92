import FolioCore
import XCTest

/// A folder's time sent again after a change inside it landed carries only the time: another device's rename,
/// move, mode change or delete of the folder meanwhile is taken, never undone.
final class FolderTimeResendTests: XCTestCase {
    /// A folder `dir` on the remote (at `d1`) whose child `dir/file` was created here and landed: the folder's
    /// time waits to be sent again. Returns the folder's inode, its template and the child's.
    private func folderWaitingForItsTime(
        _ core: CoreHarness
    ) async throws -> (ino: UInt64, folder: RemoteItemTemplate, child: RemoteItemTemplate) {
        let dir = try core.fileSystem.makeDirectory(
            parent: 1, name: "dir", permissions: 0o755, context: CoreHarness.context())
        let folder = try XCTUnwrap(core.completeCreate(
            try XCTUnwrap(core.fileSystem.nextUploadWork(limit: 10).first), version: "d1"))
        try await core.write("dir/file", "content")
        let child = try XCTUnwrap(core.completeCreate(
            try XCTUnwrap(core.fileSystem.nextUploadWork(limit: 10).first), version: "f1"))
        XCTAssertEqual(child.name, "file")
        XCTAssertEqual(core.fileSystem.node(dir.ino)?.timeDirty, true, "the folder's time is not sent again")
        return (dir.ino, folder, child)
    }

    private func remoteFolder(
        _ template: RemoteItemTemplate, name: String = "dir", mode: UInt32 = 0o755, version: String
    ) -> RemoteItem {
        RemoteItem(
            id: template.id, container: .drive, parentID: nil, name: name, kind: .directory, size: 0,
            modificationTime: .now(), mode: mode, version: version)
    }

    private func remoteChild(_ template: RemoteItemTemplate) -> RemoteItem {
        RemoteItem(
            id: template.id, container: .drive, parentID: template.parentID, name: template.name, kind: .file,
            size: 7, modificationTime: .now(), mode: 0o644, version: "f1")
    }

    /// The changes of the folder's next upload.
    private func nextFolderChanges(_ core: CoreHarness, _ ino: UInt64) -> (UploadWork, RemoteItemChanges)? {
        for work in core.fileSystem.nextUploadWork(limit: 10) {
            if case .modify(ino, _, _, _, let changes, _, _, _) = work { return (work, changes) }
        }
        return nil
    }

    func testARemoteRenameAndModeOfAFolderWaitingForItsTimeAreTakenAndOnlyTheTimeIsSent() async throws {
        let core = try CoreHarness()
        let (ino, folder, child) = try await folderWaitingForItsTime(core)
        let localTime = try XCTUnwrap(core.fileSystem.node(ino)?.modificationTime)
        // Another device renames the folder and makes it private; its echo of our child's create comes too.
        try core.fileSystem.applyEnumeration(of: .drive, items: [
            remoteFolder(folder, name: "renamed-elsewhere", mode: 0o700, version: "d2"), remoteChild(child),
        ])
        let node = try XCTUnwrap(core.fileSystem.node(ino))
        XCTAssertEqual(node.name, "renamed-elsewhere", "the other device's rename is not taken")
        XCTAssertEqual(node.mode, 0o700, "the other device's mode is not taken")
        XCTAssertEqual(node.modificationTime, localTime, "the folder's own time gave way to the remote's")
        XCTAssertEqual(try core.list(""), ["renamed-elsewhere"])
        XCTAssertEqual(try core.list("renamed-elsewhere"), ["file"])

        guard let (work, changes) = nextFolderChanges(core, ino) else { return XCTFail("the time is not sent") }
        XCTAssertEqual(changes.modificationTime, localTime)
        XCTAssertNil(changes.name, "the re-send undoes the rename")
        XCTAssertNil(changes.mode, "the re-send undoes the mode")
        XCTAssertNil(changes.parentID ?? nil, "the re-send moves the folder")
        XCTAssertNil(changes.container)
        // It lands: nothing is left to send, and the folder keeps the other device's name and mode.
        core.fileSystem.finishUpload(work, result: .success(
            remoteFolder(folder, name: "renamed-elsewhere", mode: 0o700, version: "d3")))
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 0)
        XCTAssertEqual(core.fileSystem.node(ino)?.timeDirty, false)
        XCTAssertEqual(core.fileSystem.node(ino)?.name, "renamed-elsewhere")
    }

    func testARemoteRenameWhileTheTimeIsInFlightIsTakenAndAChildLandingMeanwhileSendsItAgain() async throws {
        let core = try CoreHarness()
        let (ino, folder, child) = try await folderWaitingForItsTime(core)
        guard let (work, changes) = nextFolderChanges(core, ino) else { return XCTFail("the time is not sent") }
        XCTAssertNil(changes.name)
        // Another child lands while the time is on its way: the time goes once more after it.
        try await core.write("dir/second", "2")
        XCTAssertNotNil(core.completeCreate(try XCTUnwrap(core.fileSystem.nextUploadWork(limit: 10).first)))
        try core.fileSystem.applyEnumeration(of: .drive, items: [
            remoteFolder(folder, name: "renamed-elsewhere", version: "d2"), remoteChild(child),
        ])
        XCTAssertEqual(core.fileSystem.node(ino)?.name, "renamed-elsewhere")
        core.fileSystem.finishUpload(work, result: .success(remoteFolder(folder, version: "d3")))
        XCTAssertEqual(core.fileSystem.node(ino)?.timeDirty, true, "the second child's echo is not answered")
        guard let (_, again) = nextFolderChanges(core, ino) else { return XCTFail("the time is not sent again") }
        XCTAssertNil(again.name, "the re-send undoes the rename")
        XCTAssertNotNil(again.modificationTime)
    }

    func testAUserRenameOfTheFolderStillSendsItsName() async throws {
        let core = try CoreHarness()
        let (ino, _, _) = try await folderWaitingForItsTime(core)
        try core.fileSystem.rename(parent: 1, name: "dir", newParent: 1, newName: "renamed-here", flags: [])
        guard let (_, changes) = nextFolderChanges(core, ino) else { return XCTFail("nothing is sent") }
        XCTAssertEqual(changes.name, "renamed-here")
        XCTAssertNotNil(changes.modificationTime)
    }

    func testTheTimeWaitingSurvivesARestartAndStillCarriesOnlyTheTime() async throws {
        let core = try CoreHarness()
        let (ino, _, _) = try await folderWaitingForItsTime(core)
        try core.remount()
        XCTAssertEqual(core.fileSystem.node(ino)?.timeDirty, true)
        XCTAssertEqual(core.fileSystem.node(ino)?.metadataDirty, false)
        guard let (_, changes) = nextFolderChanges(core, ino) else { return XCTFail("the time is lost") }
        XCTAssertNil(changes.name)
        XCTAssertNotNil(changes.modificationTime)
    }

    func testAFolderDeletedElsewhereWhileItsTimeWaitsIsRemovedHere() async throws {
        let core = try CoreHarness()
        let (_, _, _) = try await folderWaitingForItsTime(core)
        // Deleted on the other device with what it held: the file goes, then the folder.
        try core.fileSystem.applyEnumeration(of: .drive, items: [])
        try core.fileSystem.applyEnumeration(of: .drive, items: [])
        XCTAssertEqual(try core.list(""), [], "the folder deleted elsewhere came back")
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 0)
        XCTAssertEqual(core.fileSystem.nextUploadWork(limit: 10).count, 0)
    }

    func testAFolderDeletedElsewhereWhileItsTimeIsInFlightIsNotCreatedAgain() async throws {
        let core = try CoreHarness()
        let (ino, _, _) = try await folderWaitingForItsTime(core)
        guard let (work, _) = nextFolderChanges(core, ino) else { return XCTFail("the time is not sent") }
        try core.fileSystem.applyEnumeration(of: .drive, items: [])
        core.fileSystem.finishUpload(work, result: .failure(.notFound("deleted")))
        XCTAssertEqual(core.fileSystem.nextUploadWork(limit: 10).count, 0, "the folder is created again")
        try core.fileSystem.applyEnumeration(of: .drive, items: [])
        XCTAssertEqual(try core.list(""), [])
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 0)
    }

    func testAFolderDeletedElsewhereKeepsANewLocalChildByBeingCreatedAgain() async throws {
        let core = try CoreHarness()
        let (ino, _, _) = try await folderWaitingForItsTime(core)
        guard let (work, _) = nextFolderChanges(core, ino) else { return XCTFail("the time is not sent") }
        try await core.write("dir/new", "kept")
        try core.fileSystem.applyEnumeration(of: .drive, items: [])
        core.fileSystem.finishUpload(work, result: .failure(.notFound("deleted")))
        try core.fileSystem.applyEnumeration(of: .drive, items: [])
        XCTAssertEqual(try core.list("dir"), ["new"], "the new local file is lost")
        let value = try await core.read("dir/new")
        XCTAssertEqual(value, "kept")
        let work2 = core.fileSystem.nextUploadWork(limit: 10)
        guard case .create(ino, let template, _, _, _)? = work2.first else {
            return XCTFail("the folder is not created again for its new file: \(work2.map(\.summary))")
        }
        XCTAssertEqual(template.name, "dir")
    }
}
