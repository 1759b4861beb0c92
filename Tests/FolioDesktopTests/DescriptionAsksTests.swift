@testable import FolioDesktop
import XCTest

/// The describer's book of placeholders to ask about again: the schedule, a new version starting over, and the
/// bound that keeps a `find` of a big tree from costing memory per placeholder.
final class DescriptionAsksTests: XCTestCase {
    private let start = ContinuousClock.now
    private let schedule: [Duration] = [.seconds(1), .seconds(3)]

    func testAPlaceholderIsAskedAboutOnScheduleThenNoMore() {
        var asks = DescriptionAsks(schedule: schedule, limit: 10)
        XCTAssertTrue(asks.noDescription(of: 7, version: "v1", at: start))
        XCTAssertEqual(asks.nextDue, start + .seconds(1))
        XCTAssertEqual(asks.dueAt(start), [])
        XCTAssertEqual(asks.dueAt(start + .seconds(1)), [7])
        asks.asking(7)
        XCTAssertNil(asks.nextDue)
        XCTAssertTrue(asks.noDescription(of: 7, version: "v1", at: start + .seconds(1)))
        XCTAssertEqual(asks.nextDue, start + .seconds(4))
        asks.asking(7)
        XCTAssertFalse(asks.noDescription(of: 7, version: "v1", at: start + .seconds(4)), "the asks ran out")
        XCTAssertNil(asks.nextDue)
        XCTAssertEqual(asks.count, 1, "kept, so that a rename does not start the asks over")
        XCTAssertFalse(asks.noDescription(of: 7, version: "v1", at: start + .seconds(5)))
    }

    func testANewVersionStartsOver() {
        var asks = DescriptionAsks(schedule: schedule, limit: 10)
        asks.noDescription(of: 7, version: "v1", at: start)
        asks.noDescription(of: 7, version: "v1", at: start)
        XCTAssertFalse(asks.noDescription(of: 7, version: "v1", at: start))
        XCTAssertTrue(asks.noDescription(of: 7, version: "v2", at: start), "a new version")
        XCTAssertEqual(asks.nextDue, start + .seconds(1))
    }

    func testADescribedOrGonePlaceholderIsForgotten() {
        var asks = DescriptionAsks(schedule: schedule, limit: 10)
        asks.noDescription(of: 7, version: "v1", at: start)
        asks.noDescription(of: 8, version: "v1", at: start)
        asks.forget(7)
        XCTAssertEqual(asks.count, 1)
        XCTAssertEqual(asks.dueAt(start + .seconds(9)), [8])
        XCTAssertTrue(asks.noDescription(of: 7, version: "v1", at: start), "met again: asked again from the start")
    }

    func testAFullBookFollowsNoMorePlaceholdersUntilAsksRunOut() {
        var asks = DescriptionAsks(schedule: schedule, limit: 3)
        for ino in UInt64(1)...3 { XCTAssertTrue(asks.noDescription(of: ino, version: "v", at: start)) }
        XCTAssertFalse(asks.noDescription(of: 4, version: "v", at: start), "full: asked once, not followed")
        XCTAssertEqual(asks.count, 3)
        XCTAssertEqual(asks.dueAt(start + .seconds(60)), [1, 2, 3])
        XCTAssertTrue(asks.noDescription(of: 2, version: "v", at: start), "one already followed goes on")
        // The asks of 1 run out: its place is made room for when a new placeholder needs one.
        asks.noDescription(of: 1, version: "v", at: start)
        XCTAssertFalse(asks.noDescription(of: 1, version: "v", at: start))
        XCTAssertTrue(asks.noDescription(of: 5, version: "v", at: start), "room made: 1's asks had run out")
        XCTAssertEqual(asks.count, 3)
        XCTAssertEqual(asks.dueAt(start + .seconds(60)), [2, 3, 5])
        XCTAssertFalse(asks.noDescription(of: 6, version: "v", at: start), "full again, nothing finished")
    }

    func testTheBookStaysBoundedWhateverIsMet() {
        var asks = DescriptionAsks(schedule: schedule, limit: 100)
        for ino in UInt64(1)...10_000 {
            asks.noDescription(of: ino, version: "v\(ino % 7)", at: start)
            if ino % 3 == 0 { asks.noDescription(of: ino, version: "v\(ino % 7)", at: start) }
            if ino % 5 == 0 { asks.noDescription(of: ino, version: "v\(ino % 7)", at: start) }
            XCTAssertLessThanOrEqual(asks.count, 100)
            XCTAssertLessThanOrEqual(asks.due.count, asks.count)
        }
    }
}
