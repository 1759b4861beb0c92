import FolioCore
@testable import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// How uploads are staged and put into place: unnamed files linked into place where the filesystem allows it,
/// named ones renamed into place elsewhere, and new files placed outside the tree's lock.
final class StagingTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote()
    }

    override func tearDownWithError() throws {
        remote.remove()
    }

    private var stagingFolder: String { remote.root.appending(".folio/staging").string }

    private func stagedNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: stagingFolder)
    }

    func testAnUploadHasNoNameUntilItIsInPlace() async throws {
        let provider = try remote.provider(NetworkSimulation(bandwidthBytesPerSecond: 1 << 20))
        let probe = try provider.staging.newFile("probe")
        probe.discard(placed: false)
        try XCTSkipIf(probe.path != nil, "the filesystem of \(stagingFolder) has no unnamed files")
        let content = try remote.contentFile([UInt8](repeating: 3, count: 512 << 10))
        let template = remote.template("slow.bin")
        let upload = Task { try await provider.createItem(template, contents: content) }
        // A quarter of a second into the half-second copy: nothing named anywhere yet.
        try await Task.sleep(for: .milliseconds(250))
        XCTAssertEqual(try stagedNames(), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: remote.path("slow.bin")))
        let created = try await upload.value
        XCTAssertEqual(created.size, 512 << 10)
        XCTAssertEqual(FileManager.default.contents(atPath: remote.path("slow.bin")), try Data(contentsOf: URL(
            fileURLWithPath: content.string)))
        XCTAssertEqual(try stagedNames(), [])
    }

    func testNamedStagingWorksAndLeavesNothingBehind() async throws {
        // A filesystem without unnamed files: every upload is staged under a name and renamed into place.
        let provider = try LocalProvider(root: remote.root, simulation: .none, unnamedStagedFiles: false)
        XCTAssertFalse(provider.staging.makesUnnamedFiles)
        let creations = try (0..<5).map { index in
            ItemCreation(remote.template("f\(index).txt"), contents: try remote.contentFile("content \(index)"))
        }
        let created = try await provider.createItems(creations).map { try $0.get() }
        XCTAssertEqual(try String(contentsOfFile: remote.path("f3.txt"), encoding: .utf8), "content 3")
        // A modify replaces the content in one step.
        let changed = try await provider.modifyItem(
            created[0].id, in: .drive, baseVersion: created[0].version, changes: RemoteItemChanges(),
            contents: try remote.contentFile("changed"))
        XCTAssertTrue(changed.version.hasPrefix("2-"), changed.version)
        XCTAssertEqual(try String(contentsOfFile: remote.path("f0.txt"), encoding: .utf8), "changed")
        // A taken name fails and its staged copy goes.
        try remote.writeByHand("someone else's", to: "taken.txt")
        do {
            _ = try await provider.createItem(remote.template("taken.txt"), contents: try remote.contentFile("mine"))
            XCTFail("a create replaced someone else's file")
        } catch FolioError.exists {}
        XCTAssertEqual(try String(contentsOfFile: remote.path("taken.txt"), encoding: .utf8), "someone else's")
        XCTAssertEqual(try stagedNames(), [])
    }

    func testAnUnnamedUploadReplacesAFileInOneStep() async throws {
        // A modify (and a retried create with new content) puts an unnamed file over the old one: it gets a name
        // in the staging folder first, then is renamed over.
        let provider = try remote.provider()
        var template = remote.template("doc.txt")
        template.retryTag = "me@new"
        let first = try await provider.createItem(template, contents: try remote.contentFile("one"))
        let inode = try SystemCalls.status(FilePath(remote.path("doc.txt"))).inode
        let retried = try await provider.createItem(template, contents: try remote.contentFile("two"))
        XCTAssertNotEqual(retried.version, first.version)
        XCTAssertEqual(try String(contentsOfFile: remote.path("doc.txt"), encoding: .utf8), "two")
        XCTAssertNotEqual(try SystemCalls.status(FilePath(remote.path("doc.txt"))).inode, inode, "not replaced")
        let modified = try await provider.modifyItem(
            first.id, in: .drive, baseVersion: retried.version, changes: RemoteItemChanges(),
            contents: try remote.contentFile("three"))
        XCTAssertEqual(modified.id, first.id)
        XCTAssertEqual(try String(contentsOfFile: remote.path("doc.txt"), encoding: .utf8), "three")
        XCTAssertEqual(try stagedNames(), [])
    }

    func testANewFileGoesIntoItsFolderEvenIfTheFolderMovesBeforeItIsPlaced() async throws {
        // Files are placed outside the tree's lock, through the folder's descriptor: a move of the folder in
        // between (by hand here; by another upload in the daemon) does not send the file elsewhere.
        let provider = try remote.provider()
        let box = try await provider.createItem(remote.template("Box", kind: .directory, mode: 0o755), contents: nil)
        let template = remote.template("inside.txt", parentID: box.id)
        let planned = try planFile(template, holding: "inside", provider: provider)
        defer { planned.close() }
        let placement = planned.placement
        try FileManager.default.moveItem(atPath: remote.path("Box"), toPath: remote.path("Crate"))
        let placed = try RemoteTree.placeFile(placement)
        _ = try provider.tree.withLock { try $0.recordPlacedFile(placement, placed) }
        XCTAssertEqual(try String(contentsOfFile: remote.path("Crate/inside.txt"), encoding: .utf8), "inside")
        XCTAssertFalse(FileManager.default.fileExists(atPath: remote.path("Box")))
        let items = try await provider.enumerateItems(in: .drive).items
        let inside = try XCTUnwrap(items.first { $0.id == template.id })
        XCTAssertEqual(inside.parentID, box.id)
        XCTAssertEqual(inside.name, "inside.txt")
    }

    func testANameTakenBeforeTheFileIsPlacedIsRefusedAndKept() async throws {
        let provider = try remote.provider()
        let template = remote.template("contested.txt")
        let planned = try planFile(template, holding: "mine", provider: provider)
        defer { planned.close() }
        let placement = planned.placement
        try remote.writeByHand("theirs", to: "contested.txt")
        XCTAssertThrowsError(try RemoteTree.placeFile(placement)) { error in
            guard case FolioError.exists = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try String(contentsOfFile: remote.path("contested.txt"), encoding: .utf8), "theirs")
    }

    func testConcurrentCreatesOfOneItemUnderDifferentNamesMakeOneFile() async throws {
        // The same item sent by several calls at once, as different names (a rename between attempts): only one
        // file is ever put into place; the others are its retries.
        let provider = try remote.provider()
        let template = remote.template("first.txt")
        let content = try remote.contentFile("once")
        let ids = try await withThrowingTaskGroup(of: ItemID.self) { group in
            for index in 0..<8 {
                var renamed = template
                renamed.name = "name \(index).txt"
                group.addTask { try await provider.createItem(renamed, contents: content).id }
            }
            return try await group.reduce(into: Set<ItemID>()) { $0.insert($1) }
        }
        XCTAssertEqual(ids, [template.id])
        let items = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(items.count, 1, "\(items.map(\.name))")
        XCTAssertEqual(items.first?.id, template.id)
    }

    func testANameTakenByAnotherProcessCreatingTheSameItemIsThatCreate() async throws {
        // Another process (another mount of the remote) created the same item under this name between planning
        // and placing: this create is its retry, not a failure.
        let provider = try remote.provider()
        var template = remote.template("shared.txt")
        template.retryTag = "me@new"
        let planned = try planFile(template, holding: "same", provider: provider)
        defer { planned.close() }
        let placement = planned.placement
        try remote.writeByHand("same", to: "shared.txt")
        try StoredAttributes(id: template.id).write(to: FilePath(remote.path("shared.txt")))
        XCTAssertThrowsError(try RemoteTree.placeFile(placement))
        let made = try provider.tree.withLock { tree in
            defer { tree.finishPlacing(placement) }
            return try tree.createPlacedConcurrently(placement)
        }
        XCTAssertEqual(made?.item.id, template.id)
        XCTAssertEqual(made?.renamed, false, "the same content put into place again")
        XCTAssertTrue(try provider.tree.withLock { $0.placing.isEmpty })
        // A file there with another id belongs to someone else.
        try StoredAttributes(id: .generate()).write(to: FilePath(remote.path("shared.txt")))
        let other = try provider.tree.withLock { tree in try tree.createPlacedConcurrently(placement) }
        XCTAssertNil(other)
    }

    /// A new staged file holding `content`, and the create of `template` from it planned under the tree's lock, as
    /// a batch create does before it places files outside the lock. Call ``PlannedFile/close()`` when done.
    private func planFile(
        _ template: RemoteItemTemplate, holding content: String, provider: LocalProvider
    ) throws -> PlannedFile {
        let staged = try provider.staging.newFile("upload")
        var folders: [RemoteTree.FolderKey: RemoteTree.FoundFolder] = [:]
        do {
            try staged.descriptor.writeAll(Array(content.utf8))
            let plan = try provider.tree.withLock { try $0.planCreate(template, staged: staged, folders: &folders) }
            guard case .placeFile(let placement) = plan else { throw FolioError.invalidArgument("planned \(plan)") }
            return PlannedFile(placement: placement, folders: Array(folders.values))
        } catch {
            staged.discard(placed: false)
            for folder in folders.values { folder.close() }
            throw error
        }
    }
}

/// A staged file and its planned create (``StagingTests``).
private struct PlannedFile {
    let placement: RemoteTree.FilePlacement
    let folders: [RemoteTree.FoundFolder]

    /// Closes the staged file (an unnamed one goes away unless it was placed) and the folders.
    func close() {
        placement.staged.discard(placed: false)
        for folder in folders { folder.close() }
    }
}
