import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// The journal behind WebDAV anchors: a listing that began before a change made through the provider never
/// undoes that change (the uploader and the poller run at once).
final class WebDAVJournalTests: XCTestCase {
    private let folder = ItemID("folder")

    private func file(_ name: String, version: String = "\"1\"") -> RemoteItem {
        RemoteItem(
            id: ItemID(name), container: .drive, parentID: folder, name: name, kind: .file, size: 1,
            modificationTime: Timestamp(seconds: 1, nanoseconds: 0), mode: 0o644, version: version)
    }

    func testAListingOlderThanACreateHereDoesNotDeleteIt() {
        let journal = WebDAVJournal(file: nil)
        journal.took(listing: [file("a")], of: folder, in: .drive, startedAt: 0)
        let anchor = journal.generation(.drive)
        let startedAt = journal.generation(.drive)  // a listing begins …
        journal.changed(file("new"))  // … an upload lands …
        let known = journal.took(listing: [file("a")], of: folder, in: .drive, startedAt: startedAt)  // … it ends
        XCTAssertEqual(Set(known.map(\.name)), ["a"], "the listing as it was, nothing invented")
        let changes = journal.changes(.drive, since: anchor)
        XCTAssertEqual(changes.updated.map(\.name), ["new"], "the create stands")
        XCTAssertEqual(changes.deleted, [], "and is not taken back by the older listing")
        XCTAssertEqual(journal.took(listing: [file("a")], of: folder, in: .drive, startedAt: journal.generation(.drive))
            .map(\.name), ["a"], "a listing begun after the create that lacks it does delete it")
        XCTAssertEqual(journal.changes(.drive, since: anchor).deleted, [ItemID("new")])
    }

    func testAListingOlderThanADeleteOrAnEditHereDoesNotBringTheOldBack() {
        let journal = WebDAVJournal(file: nil)
        journal.took(listing: [file("a"), file("b")], of: folder, in: .drive, startedAt: 0)
        let anchor = journal.generation(.drive)
        let startedAt = journal.generation(.drive)
        journal.deleted(ItemID("a"), in: .drive)
        journal.changed(file("b", version: "\"2\""))
        let known = journal.took(listing: [file("a"), file("b")], of: folder, in: .drive, startedAt: startedAt)
        XCTAssertEqual(known.map(\.version), ["\"2\""], "a stays deleted, b keeps its new version")
        let changes = journal.changes(.drive, since: anchor)
        XCTAssertEqual(changes.deleted, [ItemID("a")])
        XCTAssertEqual(changes.updated.map(\.version), ["\"2\""])
    }
}
