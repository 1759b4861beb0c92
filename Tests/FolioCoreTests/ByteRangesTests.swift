import FolioCore
import Foundation
import SystemPackage
import XCTest

/// The range map of a ranged download, and the sidecar it is recorded in.
final class ByteRangesTests: XCTestCase {
    func testInsertMergesOverlappingAndAdjacentRanges() {
        var ranges = ByteRanges()
        ranges.insert(10..<20)
        ranges.insert(30..<40)
        XCTAssertEqual(ranges.ranges, [10..<20, 30..<40])
        ranges.insert(20..<25)
        XCTAssertEqual(ranges.ranges, [10..<25, 30..<40], "adjacent ranges merge")
        ranges.insert(5..<35)
        XCTAssertEqual(ranges.ranges, [5..<40])
        ranges.insert(50..<50)
        XCTAssertEqual(ranges.ranges, [5..<40], "an empty range adds nothing")
        XCTAssertEqual(ranges.count, 35)
    }

    func testContainsAndMissing() {
        let ranges = ByteRanges([0..<10, 20..<30])
        XCTAssertTrue(ranges.contains(0..<10))
        XCTAssertTrue(ranges.contains(22..<25))
        XCTAssertTrue(ranges.contains(5..<5))
        XCTAssertFalse(ranges.contains(5..<21), "a range across a gap is not here")
        XCTAssertFalse(ranges.contains(30..<31))
        XCTAssertEqual(ranges.missing(in: 0..<40), [10..<20, 30..<40])
        XCTAssertEqual(ranges.missing(in: 5..<25), [10..<20])
        XCTAssertEqual(ranges.missing(in: 22..<28), [])
        XCTAssertEqual(ranges.missing(in: 35..<45), [35..<45])
        XCTAssertTrue(ranges.overlaps(9..<11))
        XCTAssertFalse(ranges.overlaps(10..<20))
    }

    func testRemoveCutsRanges() {
        var ranges = ByteRanges([0..<100])
        ranges.remove(10..<20)
        ranges.remove(90..<200)
        XCTAssertEqual(ranges.ranges, [0..<10, 20..<90])
    }

    func testSidecarRoundTripsAndIsRefusedWhenItsFileDoesNotMatch() throws {
        let folder = FilePathHelper.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = try ContentCache(directory: FilePath(folder))
        let file = try cache.makeSizedFile(1 << 20)
        let record = PartialContentRecord(
            container: .drive, itemID: ItemID("item"), version: "v1", size: 1 << 20, file: file,
            present: ByteRanges([0..<4096, 65536..<131072]))
        try cache.writePartialRecord(record)
        XCTAssertEqual(cache.readPartialRecord(named: record.name), record)
        XCTAssertNil(
            cache.readPartialRecord(named: PartialContentRecord.name(container: .drive, itemID: ItemID("item"),
                                                                     version: "v2")),
            "another version has no record")
        // A file that is not of the record's size (cut short, replaced) is not trusted: the download starts over.
        XCTAssertEqual(truncate(cache.path(of: file).string, 4096), 0)
        XCTAssertNil(cache.readPartialRecord(named: record.name))
    }
}

/// Temporary folders for these tests.
private enum FilePathHelper {
    static func temporaryFolder() -> String {
        let path = NSTemporaryDirectory() + "folio-ranges-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
