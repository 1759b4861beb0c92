@testable import FolioCore
import XCTest

/// Tags that travel (issue 16): the three-way merge of tag sets, and the merge of remote tags into a node, as pure
/// functions. A tag change is metadata only: it never conflicts and never touches content.
final class TagMergeTests: XCTestCase {
    private let id = ItemID("doc")
    private let then = Timestamp(seconds: 1_700_000_000, nanoseconds: 0)

    private func file(_ state: ItemState = .materialized, tags: [String] = [], remoteTags: [String]? = nil) -> Node {
        var node = Node(
            ino: 10, itemID: id, container: .drive, parent: 1, name: "a.txt", kind: .file, size: 5,
            modificationTime: then, mode: 0o644, state: state, contentFile: state.hasLocalContent ? "c10" : nil,
            generation: 1, remoteVersion: "v1", remoteContainer: .drive)
        node.tags = tags
        node.remoteTags = remoteTags
        return node
    }

    private func remote(version: String = "v1", tags: [String]?) -> RemoteItem {
        RemoteItem(
            id: id, container: .drive, parentID: nil, name: "a.txt", kind: .file, size: 5, modificationTime: then,
            mode: 0o644, version: version, tags: tags)
    }

    private func merge(_ node: Node, _ item: RemoteItem) -> KnownItemMerge {
        KnownItemMerge.merge(
            item, into: node, parent: 1, container: .drive, scope: .changes(deleted: []), book: SyncBook(),
            surroundings: .init())
    }

    func testThreeWayMergeKeepsWhatEachSideAddedAndWhatNeitherRemoved() {
        XCTAssertEqual(Set(TagUpdate.merge(base: [], local: ["a"], remote: ["b"])), ["a", "b"])
        XCTAssertEqual(Set(TagUpdate.merge(base: ["x"], local: ["x", "a"], remote: ["x", "b"])), ["x", "a", "b"])
        XCTAssertEqual(TagUpdate.merge(base: ["x"], local: [], remote: ["x"]), [], "a removal here sticks")
        XCTAssertEqual(TagUpdate.merge(base: ["x"], local: ["x"], remote: []), [], "a removal there sticks")
        XCTAssertEqual(Set(TagUpdate.merge(base: nil, local: ["a"], remote: ["b"])), ["a", "b"], "no base: union")
        XCTAssertEqual(TagUpdate.merge(base: nil, local: ["a", "a"], remote: ["a"]), ["a"], "no repeats")
    }

    func testBadTagsAreNamed() {
        XCTAssertNotNil(TagUpdate.problem(with: "a,b"))
        XCTAssertNotNil(TagUpdate.problem(with: "a/b"))
        XCTAssertNotNil(TagUpdate.problem(with: ""))
        XCTAssertNotNil(TagUpdate.problem(with: ".."))
        XCTAssertNil(TagUpdate.problem(with: "two words"))
    }

    func testRemoteTagsReachACleanNodeWithoutTouchingItsContent() {
        let merged = merge(file(), remote(tags: ["red"]))
        XCTAssertEqual(merged.node.tags, ["red"])
        XCTAssertEqual(merged.node.remoteTags, ["red"])
        XCTAssertFalse(merged.node.tagsPending)
        XCTAssertFalse(merged.contentReplaced)
        XCTAssertEqual(merged.node.state, .materialized)
        XCTAssertEqual(merged.node.contentFile, "c10")
        XCTAssertTrue(merged.attributesChanged, "watchers hear of it")
    }

    func testATagChangeWaitingHereIsMergedWithTheRemotesAndStillWaits() {
        let node = file(tags: ["mine"], remoteTags: [])
        XCTAssertTrue(node.tagsPending)
        XCTAssertTrue(node.hasPendingUpload)
        XCTAssertFalse(node.hasPendingUploadBesidesTags)
        let merged = merge(node, remote(tags: ["theirs"]))
        XCTAssertEqual(Set(merged.node.tags), ["mine", "theirs"])
        XCTAssertEqual(merged.node.remoteTags, ["theirs"])
        XCTAssertTrue(merged.node.tagsPending, "the union is sent")
        XCTAssertEqual(merged.node.pendingTagUpdate, TagUpdate(base: ["theirs"], tags: ["mine", "theirs"]))
    }

    func testNewContentThereWhileATagChangeWaitsHereIsTakenNotAConflict() {
        let merged = merge(file(tags: ["mine"], remoteTags: []), remote(version: "v2", tags: []))
        XCTAssertEqual(merged.outcome, .updated)
        XCTAssertTrue(merged.contentReplaced)
        XCTAssertEqual(merged.node.state, .placeholder)
        XCTAssertEqual(merged.node.tags, ["mine"])
        XCTAssertTrue(merged.node.tagsPending)
    }

    func testATagChangeThereWhileContentWaitsHereIsNoConflict() {
        let merged = merge(file(.dirty(generation: 2)), remote(tags: ["theirs"]))
        XCTAssertEqual(merged.node.state, .dirty(generation: 2))
        XCTAssertEqual(merged.node.tags, ["theirs"])
    }

    func testARemoteThatKeepsNoTagsLeavesTheOnesHere() {
        let node = file(tags: ["mine"], remoteTags: ["mine"])
        let merged = merge(node, remote(tags: nil))
        XCTAssertEqual(merged.node, node)
    }

    func testALandedUpdateMergesAChangeMadeMeanwhile() {
        var node = file(tags: ["a", "c"], remoteTags: [])
        node.tagUpdateLanded(TagUpdate(base: [], tags: ["a"]), answer: ["a", "b"])
        XCTAssertEqual(Set(node.tags), ["a", "b", "c"])
        XCTAssertEqual(node.remoteTags, ["a", "b"])
        XCTAssertTrue(node.tagsPending, "c still waits")
        var removed = file(tags: [], remoteTags: [])
        removed.tagUpdateLanded(TagUpdate(base: [], tags: ["a"]), answer: ["a", "b"])
        XCTAssertEqual(removed.tags, ["b"], "a removed meanwhile stays removed")
        var nothingKept = file(tags: ["a"], remoteTags: nil)
        nothingKept.tagUpdateLanded(TagUpdate(base: nil, tags: ["a"]), answer: nil)
        XCTAssertFalse(nothingKept.tagsPending, "a remote that keeps no tags is not asked again and again")
    }
}
