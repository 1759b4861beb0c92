@testable import FolioCore
import XCTest

/// The merge of one remote item into its known node, as a pure function: no filesystem, no store, no lock.
final class KnownItemMergeTests: XCTestCase {
    private let id = ItemID("doc")
    private let then = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
    private let later = Timestamp(seconds: 1_700_000_100, nanoseconds: 0)

    private func file(_ state: ItemState, version: String? = "v1", parent: UInt64 = 1, name: String = "a.txt") -> Node {
        Node(
            ino: 10, itemID: id, container: .drive, parent: parent, name: name, kind: .file, size: 5,
            modificationTime: then, mode: 0o644, state: state, contentFile: state.hasLocalContent ? "c10" : nil,
            generation: 1, remoteVersion: version, remoteContainer: .drive)
    }

    private func remote(version: String = "v2", name: String = "a.txt", size: Int64 = 9, mode: UInt32 = 0o644)
        -> RemoteItem {
        RemoteItem(
            id: id, container: .drive, parentID: nil, name: name, kind: .file, size: size, modificationTime: later,
            mode: mode, version: version)
    }

    private func merge(
        _ node: Node, _ item: RemoteItem, parent: UInt64 = 1, book: SyncBook = SyncBook(),
        surroundings: KnownItemMerge.Surroundings = .init()
    ) -> KnownItemMerge {
        KnownItemMerge.merge(
            item, into: node, parent: parent, container: .drive, scope: .changes(deleted: []), book: book,
            surroundings: surroundings)
    }

    func testANewRemoteVersionOfACleanFileMakesItAPlaceholderOfThatVersion() {
        let merged = merge(file(.materialized), remote())
        XCTAssertEqual(merged.outcome, .updated)
        XCTAssertEqual(merged.node.state, .placeholder)
        XCTAssertEqual(merged.node.remoteVersion, "v2")
        XCTAssertEqual(merged.node.size, 9)
        XCTAssertNil(merged.node.contentFile)
        XCTAssertEqual(merged.droppedContent, "c10", "the old content is the caller's to drop")
        XCTAssertTrue(merged.contentReplaced)
        XCTAssertTrue(merged.attributesChanged, "the time changed")
        XCTAssertNil(merged.origin)
    }

    func testAnUnchangedItemChangesNothing() {
        let node = file(.materialized, version: "v2")
        var item = remote(size: 5)
        item.modificationTime = then
        let merged = merge(node, item)
        XCTAssertEqual(merged.node, node, "no row to write")
        XCTAssertFalse(merged.contentReplaced)
        XCTAssertFalse(merged.attributesChanged)
    }

    func testChangedHereAndThereIsAConflictThatKeepsTheLocalVersion() {
        let merged = merge(file(.dirty(generation: 2)), remote())
        XCTAssertEqual(merged.outcome, .conflict)
        XCTAssertEqual(merged.node.state, .conflicted)
        XCTAssertEqual(merged.node.contentFile, "c10")
        XCTAssertEqual(merged.node.remoteVersion, "v1", "the conflict version is fetched later")
        XCTAssertNil(merged.droppedContent)
    }

    func testAFailedUploadChangedOnTheRemoteIsAConflict() {
        XCTAssertEqual(merge(file(.failed(reason: "quota")), remote()).node.state, .conflicted)
    }

    func testAnUploadInFlightOrUncertainIsNoConflict() {
        var inFlight = SyncBook()
        inFlight.uploadStarted(id)
        let uploading = merge(file(.uploading(generation: 2)), remote(), book: inFlight)
        XCTAssertEqual(uploading.outcome, .unchanged, "the remote version may be our own upload")
        XCTAssertEqual(uploading.node.state, .uploading(generation: 2))
        var uncertain = SyncBook()
        uncertain.uploadMayHaveLanded(id)
        XCTAssertEqual(merge(file(.dirty(generation: 2)), remote(), book: uncertain).outcome, .unchanged)
    }

    func testARemoteChangeWaitsForAnEditorsSave() {
        let merged = merge(file(.materialized), remote(), surroundings: .init(heldBySave: true))
        XCTAssertEqual(merged.outcome, .waitForSave)
        XCTAssertEqual(merged.node.state, .materialized)
    }

    func testOnlyAMetadataChangeWaitingTakesTheRemoteContentAndKeepsTheLocalName() {
        var node = file(.materialized, name: "renamed.txt")
        node.metadataDirty = true
        let merged = merge(node, remote(name: "a.txt"))
        XCTAssertEqual(merged.outcome, .updated)
        XCTAssertEqual(merged.node.state, .placeholder)
        XCTAssertEqual(merged.node.remoteVersion, "v2")
        XCTAssertEqual(merged.node.name, "renamed.txt", "the local rename stays, to be sent")
        XCTAssertTrue(merged.node.metadataDirty)
        XCTAssertNil(merged.origin)
    }

    func testAMoveOnTheRemoteMovesTheNodeUnlessTheNameIsTaken() {
        let node = file(.materialized, version: "v2")
        let moved = merge(node, remote(name: "b.txt"), parent: 7)
        XCTAssertEqual(moved.outcome, .updated)
        XCTAssertEqual(moved.origin, ExternalReference.Location(parent: 1, name: "a.txt"))
        XCTAssertEqual(moved.node.parent, 7)
        XCTAssertEqual(moved.node.name, "b.txt")
        let blocked = merge(node, remote(name: "b.txt"), parent: 7, surroundings: .init(nameTaken: true))
        XCTAssertEqual(blocked.outcome, .takeAgain, "taken again once the name is free")
        XCTAssertEqual(blocked.node, node)
    }

    func testAFolderKeepsItsTimeWhileTheRemoteTimeMayBeOurEcho() {
        let folder = Node(
            ino: 20, itemID: id, container: .drive, parent: 1, name: "Docs", kind: .directory, modificationTime: then,
            mode: 0o755, state: .materialized, remoteVersion: "v1", remoteContainer: .drive)
        var item = remote()
        item.kind = .directory
        item.name = "Docs"
        item.mode = 0o755
        let echo = merge(folder, item, surroundings: .init(folderTimeMayBeEcho: true))
        XCTAssertEqual(echo.node.modificationTime, then)
        XCTAssertEqual(echo.node.remoteVersion, "v2")
        XCTAssertFalse(echo.contentReplaced, "a folder has no content to replace")
        XCTAssertEqual(merge(folder, item).node.modificationTime, later)
    }

    func testAFullEnumerationMarksAFolderListed() {
        let folder = Node(
            ino: 20, itemID: id, container: .drive, parent: 1, name: "Docs", kind: .directory, modificationTime: then,
            mode: 0o755, state: .materialized, remoteVersion: "v1", remoteContainer: .drive, childrenListed: false)
        var item = remote(version: "v1")
        item.kind = .directory
        item.name = "Docs"
        item.mode = 0o755
        item.modificationTime = then
        let merged = KnownItemMerge.merge(
            item, into: folder, parent: 1, container: .drive, scope: .container, book: SyncBook(),
            surroundings: .init())
        XCTAssertTrue(merged.node.childrenListed)
    }

    func testWhereTheRemoteKeepsNoModeOrTimeTheOnesHereStayUntilItsContentChanges() {
        var node = file(.materialized, version: "v2")
        node.mode = 0o600
        var same = remote(version: "v2", size: 5)
        same.metadataKept = false  // a default mode, the server's time
        let kept = merge(node, same)
        XCTAssertEqual(kept.node.mode, 0o600)
        XCTAssertEqual(kept.node.modificationTime, then)
        XCTAssertFalse(kept.attributesChanged)
        var changed = remote(version: "v3")
        changed.metadataKept = false
        let replaced = merge(node, changed)
        XCTAssertTrue(replaced.contentReplaced)
        XCTAssertEqual(replaced.node.mode, 0o600, "the mode stays")
        XCTAssertEqual(replaced.node.modificationTime, later, "new content brings the server's time")
        var folio = remote(version: "v2", size: 5)
        folio.mode = 0o640
        XCTAssertEqual(merge(node, folio).node.mode, 0o640, "a mode the remote keeps is taken")
    }
}
