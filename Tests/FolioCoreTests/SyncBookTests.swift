@testable import FolioCore
import XCTest

/// The sync bookkeeping as a value alone: what each change records, and the actions it hands back.
final class SyncBookTests: XCTestCase {
    private let item = ItemID("item-a")
    private let other = ItemID("item-b")

    func testUploadsAndDeletesInFlight() {
        var book = SyncBook()
        XCTAssertFalse(book.isInFlight(item))
        book.uploadStarted(item)
        book.deleteStarted(other)
        XCTAssertTrue(book.isInFlight(item))
        XCTAssertTrue(book.isInFlight(other))
        XCTAssertFalse(book.uploadEnded(item), "no folder time was asked for while it ran")
        book.deleteEnded(other)
        XCTAssertFalse(book.isInFlight(item))
        XCTAssertFalse(book.isInFlight(other))
    }

    func testFolderTimeAskedForWhileItsUploadRunsOutlivesTheUpload() {
        var book = SyncBook()
        XCTAssertFalse(book.folderTimeResent(item), "no upload of it runs: nothing to remember")
        book.uploadStarted(item)
        XCTAssertTrue(book.folderTimeResent(item))
        XCTAssertTrue(book.uploadEnded(item), "the upload that ran did not send the time asked for")
        book.uploadStarted(item)
        XCTAssertFalse(book.uploadEnded(item), "asked for once, reported once")
    }

    func testALandedChangeSendsTheTimesOfTheFoldersItChangedOnce() {
        var book = SyncBook()
        book.recordFoldersChanged([7, 3], by: item)
        book.recordFoldersChanged([3], by: item)
        book.deleteStarted(item)
        XCTAssertTrue(book.mayEchoFolderTime(3))
        XCTAssertTrue(book.mayEchoFolderTime(7))
        XCTAssertFalse(book.mayEchoFolderTime(9))
        book.deleteEnded(item)
        XCTAssertEqual(book.changeLanded(item), [.resendFolderTime(3), .resendFolderTime(7)])
        XCTAssertEqual(book.changeLanded(item), [], "sent once")
        XCTAssertFalse(book.mayEchoFolderTime(3))
    }

    func testUploadOutcomeRecordsUncertaintyAndForgetsWaits() {
        var book = SyncBook()
        book.uploadWaits(5, reason: "offline")
        book.holdForUser(5, sequence: 12, reason: "name refused")
        XCTAssertTrue(book.isHeldForUser(5, sequence: 12))
        XCTAssertFalse(book.isHeldForUser(5, sequence: 13), "a new change is not held")
        book.uploadOutcomeRecorded(item, ino: 5, uncertain: true)
        XCTAssertTrue(book.uncertainUploads.contains(item))
        XCTAssertNil(book.uploadWaits[5])
        XCTAssertFalse(book.isHeldForUser(5, sequence: 12))
        book.uploadOutcomeRecorded(item, ino: 5, uncertain: false)
        XCTAssertFalse(book.uncertainUploads.contains(item))
        book.uploadMayHaveLanded(other)
        XCTAssertTrue(book.uncertainUploads.contains(other))
    }

    func testHeldChangeIsReleasedOnce() {
        var book = SyncBook()
        book.holdForUser(4, sequence: 2, reason: "refused")
        XCTAssertEqual(book.releaseHeld(4), SyncBook.HeldChange(sequence: 2, reason: "refused"))
        XCTAssertNil(book.releaseHeld(4))
    }

    func testDeferredUploadsAreTakenOnceAndCounted() {
        var book = SyncBook()
        XCTAssertFalse(book.takeDeferredUploads())
        book.uploadDeferred()
        book.uploadDeferred()
        XCTAssertTrue(book.takeDeferredUploads())
        XCTAssertFalse(book.takeDeferredUploads())
        XCTAssertEqual(book.deferredUploadCount, 2)
    }

    func testAConflictAsksForItsFetchUntilSettled() {
        var book = SyncBook()
        XCTAssertEqual(book.conflictFound(item), [.fetchConflicts])
        XCTAssertEqual(book.conflictFetches, [item])
        book.conflictSettled(item)
        XCTAssertTrue(book.conflictFetches.isEmpty)
    }

    func testItemsTakenAgainAskForARefresh() {
        var book = SyncBook()
        XCTAssertEqual(book.takeAgain(item, in: .drive), [.refreshSoon])
        XCTAssertEqual(book.itemsToTakeAgain, [item: .drive])
        book.takingAgain(item)
        XCTAssertTrue(book.itemsToTakeAgain.isEmpty)
    }

    func testARemoteChangeWaitingForASaveIsTakenAgainAndReportedOnce() {
        var book = SyncBook()
        XCTAssertFalse(book.takeRemoteChangesWaitingForSave())
        book.remoteChangeWaitsForSave(item, in: .drive)
        XCTAssertEqual(book.itemsToTakeAgain, [item: .drive])
        XCTAssertTrue(book.takeRemoteChangesWaitingForSave())
        XCTAssertFalse(book.takeRemoteChangesWaitingForSave())
    }

    func testAReplacedItemIsForgotten() {
        var book = SyncBook()
        book.uploadMayHaveLanded(item)
        _ = book.conflictFound(item)
        book.itemReplaced(item)
        XCTAssertFalse(book.uncertainUploads.contains(item))
        XCTAssertFalse(book.conflictFetches.contains(item))
    }

    func testAnEnumerationBeforeARemoteChangeIsStale() {
        var book = SyncBook()
        let epoch = book.remoteEpoch
        XCTAssertTrue(book.isCurrent(epoch))
        book.remoteChanged()
        XCTAssertFalse(book.isCurrent(epoch))
        XCTAssertTrue(book.isCurrent(book.remoteEpoch))
    }
}
