@testable import FolioCore
import XCTest

/// The merge of remote items into the tree as a function of values (``RemoteMerge``): a state built by hand,
/// items in, the changed state, the rows to write and what to invalidate, replay and log out; no filesystem,
/// no store, no lock.
final class RemoteMergeTests: XCTestCase {
    private let then = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)
    private let later = Timestamp(seconds: 1_700_000_100, nanoseconds: 0)

    /// The Drive's root (listed) with `nodes` in it.
    private func state(_ nodes: [Node]) -> State {
        var state = State()
        state.insert(Node(
            ino: 1, itemID: .root(of: .drive), container: .drive, parent: 0, name: "", kind: .directory,
            modificationTime: then, mode: 0o755, state: .materialized, remoteVersion: "root"))
        for node in nodes { state.insert(node) }
        state.nextIno = 100
        return state
    }

    private func file(
        _ ino: UInt64, _ name: String, id: String, state: ItemState = .materialized, version: String? = "v1",
        parent: UInt64 = 1
    ) -> Node {
        Node(
            ino: ino, itemID: ItemID(id), container: .drive, parent: parent, name: name, kind: .file, size: 5,
            modificationTime: then, mode: 0o644, state: state, contentFile: state.hasLocalContent ? "c\(ino)" : nil,
            generation: 1, remoteVersion: version, remoteContainer: .drive)
    }

    private func remote(
        _ name: String, id: String, kind: ItemKind = .file, parent: String? = nil, version: String = "v1"
    ) -> RemoteItem {
        RemoteItem(
            id: ItemID(id), container: .drive, parentID: parent.map { ItemID($0) }, name: name, kind: kind,
            size: kind == .file ? 5 : 0, modificationTime: then, mode: kind == .file ? 0o644 : 0o755,
            version: version)
    }

    private func merge(
        _ items: [RemoteItem], scope: MergeScope, into state: inout State, batch: inout StoreBatch
    ) -> MergeOutcome {
        let merge = RemoteMerge(
            container: .drive, rootIno: 1, scope: scope, owner: (uid: 1000, gid: 1000), now: 0,
            describe: { node, _ in
                Attributes(
                    ino: node.ino, kind: node.kind, permissions: node.mode, linkCount: 1, uid: node.uid,
                    gid: node.gid, size: node.size, accessTime: node.modificationTime,
                    modificationTime: node.modificationTime, changeTime: node.modificationTime)
            })
        return merge.merge(items, batch: &batch, state: &state)
    }

    func testAFolderListingAddsPlaceholdersAndTakesOutOnlyTheCleanItemsItDoesNotName() {
        var state = state([
            file(10, "old.txt", id: "old"),
            file(11, "mine.txt", id: "mine", state: .dirty(generation: 1), version: nil),
            file(12, "kept.txt", id: "kept"),
        ])
        var batch = StoreBatch()
        let outcome = merge(
            [remote("kept.txt", id: "kept"), remote("new.txt", id: "new")], scope: .folder(1), into: &state,
            batch: &batch)

        let new = state.child(1, "new.txt").flatMap { state.nodes[$0] }
        XCTAssertEqual(new?.state, .placeholder, "a new remote item is a placeholder")
        XCTAssertEqual(new?.remoteVersion, "v1")
        XCTAssertEqual(new?.uid, 1000, "owned as configured")
        XCTAssertNil(state.child(1, "old.txt"), "a clean item the listing does not name is gone")
        XCTAssertEqual(state.unsavedFileRemovals, ["c10"], "its content goes once the batch is written")
        XCTAssertTrue(outcome.discardedContent)
        XCTAssertEqual(state.child(1, "mine.txt"), 11, "an item not uploaded yet stays")
        XCTAssertEqual(state.child(1, "kept.txt"), 12)
        XCTAssertEqual(batch.deletes, [10])
        XCTAssertEqual(batch.upserts.map(\.name), ["new.txt"], "an unchanged item writes no row")
        XCTAssertTrue(outcome.replays.contains { if case .created(1, "new.txt", .file) = $0 { true } else { false } })
        XCTAssertTrue(outcome.replays.contains { if case .removed(1, "old.txt", _) = $0 { true } else { false } })
        XCTAssertTrue(outcome.invalidations.contains { $0.0 == 1 && $0.1 == "old.txt" })
        XCTAssertTrue(outcome.invalidations.contains { $0.0 == 1 && $0.1 == "new.txt" })
    }

    func testAnAtomicSaveOnTheRemoteKeepsTheItem() {
        var state = state([file(10, "a.txt", id: "first")])
        var batch = StoreBatch()
        var saved = remote("a.txt", id: "second", version: "v2")
        saved.modificationTime = later
        let outcome = merge([saved], scope: .changes(deleted: [ItemID("first")]), into: &state, batch: &batch)

        XCTAssertEqual(state.child(1, "a.txt"), 10, "the same inode")
        XCTAssertEqual(state.nodes[10]?.itemID, ItemID("second"), "which took the new id")
        XCTAssertEqual(state.byItemID[ItemID("second")], 10)
        XCTAssertNil(state.byItemID[ItemID("first")])
        XCTAssertEqual(state.nodes[10]?.remoteVersion, "v2")
        XCTAssertEqual(state.nodes[10]?.state, .placeholder, "of the new version")
        XCTAssertTrue(batch.deletes.isEmpty)
        XCTAssertFalse(outcome.replays.contains { if case .removed = $0 { true } else { false } })
        XCTAssertTrue(outcome.notes.contains { $0.message.contains("was replaced on the remote") })
    }

    func testAWholeContainerIsMergedParentsFirstInAnyOrder() {
        var state = state([])
        var root = state.nodes[1]!
        root.childrenListed = false
        state.nodes[1] = root
        var batch = StoreBatch()
        _ = merge(
            [
                remote("deep.txt", id: "deep", parent: "inner"),
                remote("inner", id: "inner", kind: .directory, parent: "outer"),
                remote("outer", id: "outer", kind: .directory),
            ], scope: .container, into: &state, batch: &batch)

        let outer = state.child(1, "outer")
        let inner = outer.flatMap { state.child($0, "inner") }
        XCTAssertNotNil(inner.flatMap { state.child($0, "deep.txt") }, "every item under its parent")
        XCTAssertEqual(batch.upserts.count, 4, "three items, and the root marked listed")
        XCTAssertEqual(state.nodes[1]?.childrenListed, true)
    }

    func testAChangeInAFolderNotListedYetWaitsForItsListing() {
        var folder = Node(
            ino: 20, itemID: ItemID("folder"), container: .drive, parent: 1, name: "folder", kind: .directory,
            modificationTime: then, mode: 0o755, state: .materialized, remoteVersion: "v1", childrenListed: false)
        folder.remoteContainer = .drive
        var state = state([folder])
        var batch = StoreBatch()
        _ = merge(
            [remote("new.txt", id: "new", parent: "folder")], scope: .changes(deleted: []), into: &state,
            batch: &batch)
        XCTAssertNil(state.child(20, "new.txt"), "its listing brings it when the folder is looked at")
        XCTAssertTrue(batch.upserts.isEmpty)
    }

    func testADeleteOnTheRemoteLeavesAnItemChangedHere() {
        var state = state([file(10, "a.txt", id: "a", state: .dirty(generation: 1))])
        var batch = StoreBatch()
        let outcome = merge([], scope: .changes(deleted: [ItemID("a")]), into: &state, batch: &batch)
        XCTAssertEqual(state.child(1, "a.txt"), 10, "a local change is never lost to a remote delete")
        XCTAssertTrue(batch.deletes.isEmpty)
        XCTAssertTrue(outcome.replays.isEmpty)
    }

    func testARemoteItemTakesTheNameOfAReference() {
        var state = state([])
        state.insertReference(ExternalReference(parent: 1, name: "shared.txt", target: ItemID("elsewhere")))
        var batch = StoreBatch()
        let outcome = merge([remote("shared.txt", id: "shared")], scope: .folder(1), into: &state, batch: &batch)
        XCTAssertEqual(state.child(1, "shared.txt").flatMap { state.nodes[$0] }?.itemID, ItemID("shared"))
        XCTAssertEqual(batch.referenceDeletes, [ExternalReference.Location(parent: 1, name: "shared.txt")])
        XCTAssertTrue(outcome.notes.contains { $0.level == .notice && $0.message.contains("gave way") })
    }
}
