import FolioCore
import XCTest

/// The item state machine: every allowed transition, and refusals for the rest.
final class ItemStateTests: XCTestCase {
    func testMaterializationLifecycle() throws {
        var state = ItemState.placeholder
        state = try state.applying(.materializeStarted)
        XCTAssertEqual(state, .materializing)
        XCTAssertEqual(try state.applying(.materializeFailed), .placeholder, "a failed download keeps the placeholder")
        state = try state.applying(.materializeFinished)
        XCTAssertEqual(state, .materialized)
        XCTAssertEqual(try state.applying(.evicted), .placeholder)
    }

    func testUploadMarksCleanOnlyTheCurrentGeneration() throws {
        var state = try ItemState.materialized.applying(.committed(generation: 1))
        XCTAssertEqual(state, .dirty(generation: 1))
        state = try state.applying(.uploadStarted(generation: 1))
        XCTAssertEqual(state, .uploading(generation: 1))
        // A new commit while generation 1 uploads: the upload's success must not mark it clean.
        state = try state.applying(.committed(generation: 2))
        XCTAssertEqual(state, .dirty(generation: 2))
        XCTAssertEqual(try state.applying(.uploadFinished(generation: 1)), .dirty(generation: 2))
        state = try state.applying(.uploadStarted(generation: 2))
        XCTAssertEqual(try state.applying(.uploadFinished(generation: 2)), .materialized)
    }

    func testFailuresAndConflicts() throws {
        let uploading = ItemState.uploading(generation: 3)
        XCTAssertEqual(
            try uploading.applying(.uploadFailed(generation: 3, reason: "timeout", retryable: true)),
            .dirty(generation: 3))
        XCTAssertEqual(
            try uploading.applying(.uploadFailed(generation: 3, reason: "bad name", retryable: false)),
            .failed(reason: "bad name"))
        XCTAssertEqual(try uploading.applying(.conflictDetected), .conflicted)
        XCTAssertEqual(try ItemState.failed(reason: "x").applying(.uploadStarted(generation: 4)), .uploading(generation: 4))
    }

    func testRefusedTransitions() {
        XCTAssertThrowsError(try ItemState.dirty(generation: 1).applying(.evicted), "dirty items are never evicted")
        XCTAssertThrowsError(try ItemState.placeholder.applying(.uploadStarted(generation: 1)))
        XCTAssertThrowsError(try ItemState.dirty(generation: 2).applying(.uploadStarted(generation: 1)))
        XCTAssertThrowsError(try ItemState.materialized.applying(.conflictDetected))
    }

    func testRetryOfAFailedItemMakesItDirtyAgain() throws {
        XCTAssertEqual(
            try ItemState.failed(reason: "bad name").applying(.retryRequested(generation: 5)), .dirty(generation: 5))
        XCTAssertThrowsError(try ItemState.materialized.applying(.retryRequested(generation: 1)), "only failed items")
        XCTAssertThrowsError(try ItemState.dirty(generation: 1).applying(.retryRequested(generation: 1)))
    }

    func testUnreadableContentFailsWhatHasLocalContent() throws {
        for state in [ItemState.materialized, .dirty(generation: 2), .uploading(generation: 2), .failed(reason: "x")] {
            XCTAssertEqual(try state.applying(.contentUnreadable(reason: "gone")), .failed(reason: "gone"), "\(state)")
        }
        XCTAssertThrowsError(try ItemState.placeholder.applying(.contentUnreadable(reason: "gone")))
        XCTAssertThrowsError(try ItemState.conflicted.applying(.contentUnreadable(reason: "gone")))
    }

    func testARemoteContentChangeReplacesOnlyCleanContent() throws {
        for state in [ItemState.placeholder, .materializing, .materialized] {
            XCTAssertEqual(try state.applying(.remoteContentChanged), .placeholder, "\(state)")
        }
        for state in [ItemState.dirty(generation: 1), .uploading(generation: 1), .conflicted, .failed(reason: "x")] {
            XCTAssertThrowsError(try state.applying(.remoteContentChanged), "\(state) keeps its local version")
        }
    }

    func testKeepingTheRemoteVersionOfAConflictMakesItClean() throws {
        XCTAssertEqual(try ItemState.conflicted.applying(.remoteVersionKept), .materialized)
        XCTAssertEqual(try ItemState.dirty(generation: 3).applying(.remoteVersionKept), .materialized)
        // An evicted file whose conflict versions remain: keeping the remote's puts its content in place.
        XCTAssertEqual(try ItemState.placeholder.applying(.remoteVersionKept), .materialized)
        XCTAssertEqual(try ItemState.materializing.applying(.remoteVersionKept), .materialized)
    }

    func testAFailedItemChangedOnTheRemoteIsAConflict() throws {
        XCTAssertEqual(try ItemState.failed(reason: "quota").applying(.conflictDetected), .conflicted)
        XCTAssertThrowsError(try ItemState.placeholder.applying(.conflictDetected))
    }

    func testACommitIsAllowedInEveryState() throws {
        let states: [ItemState] = [
            .placeholder, .materializing, .materialized, .dirty(generation: 1), .uploading(generation: 1), .conflicted,
            .failed(reason: "x"),
        ]
        for state in states {
            XCTAssertEqual(try state.applying(.committed(generation: 7)), .dirty(generation: 7), "\(state)")
        }
    }

    func testANodeRefusesAnImpossibleEventAndKeepsItsState() throws {
        var node = Node(
            ino: 2, itemID: ItemID("a"), container: .drive, parent: 1, name: "a.txt", kind: .file,
            modificationTime: Timestamp(seconds: 1, nanoseconds: 0), mode: 0o644, uid: 0, gid: 0,
            state: .dirty(generation: 1))
        XCTAssertThrowsError(try node.apply(.evicted)) { error in
            guard case FolioError.invalidArgument = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(node.state, .dirty(generation: 1))
        try node.apply(.uploadStarted(generation: 1))
        XCTAssertEqual(node.state, .uploading(generation: 1))
    }

    func testNamesAndFlags() {
        XCTAssertEqual(ItemState.uploading(generation: 1).name, "uploading")
        XCTAssertTrue(ItemState.conflicted.hasPendingLocalVersion)
        XCTAssertFalse(ItemState.materialized.hasPendingLocalVersion)
        XCTAssertFalse(ItemState.materializing.hasLocalContent)
    }

    func testErrnoMapping() {
        XCTAssertEqual(FolioError.busy("x").errno, .resourceBusy)
        XCTAssertEqual(FolioError.offline("x").errno, .networkDown)
        XCTAssertEqual(FolioError.nameTooLong("x").errno, .fileNameTooLong)
        XCTAssertEqual(FolioError.notPermitted("x").errno, .notPermitted)
        XCTAssertEqual(FolioError.providerFailure("x", retryable: true).errno, .ioError)
        XCTAssertTrue(FolioError.providerFailure("x", retryable: true).isRetryable)
        XCTAssertFalse(FolioError.conflict("x").isRetryable)
    }

    func testNamePolicy() {
        let policy = NamePolicy()
        XCTAssertNoThrow(try policy.validate("report.txt"))
        XCTAssertThrowsError(try policy.validate(String(repeating: "é", count: 200))) { error in
            XCTAssertEqual((error as? FolioError)?.errno, .fileNameTooLong)
        }
        for bad in ["", ".", "..", "a/b", ".folio-x"] {
            XCTAssertThrowsError(try policy.validate(bad)) { error in
                XCTAssertEqual((error as? FolioError)?.errno, .invalidArgument, bad)
            }
        }
    }
}
