import FolioCore
@testable import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// ``SpreadFolderIndex``: which files the tags and descriptions folders hold, kept between passes, never saying
/// a file is absent when it is there.
final class SpreadFolderIndexTests: XCTestCase {
    private var folder: FilePath!

    override func setUpWithError() throws {
        let path = NSTemporaryDirectory() + "spread-\(UUID().uuidString.prefix(8))/a7"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        folder = FilePath(path)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder.removingLastComponent().string)
    }

    private func add(_ name: String) {
        XCTAssertTrue(FileManager.default.createFile(atPath: folder.appending(name).string, contents: Data("[]".utf8)))
    }

    /// The names `index` keeps of the folder, asked in a new pass every 100 ms until it answers (it does once
    /// it has seen the folder unchanged for two seconds): at most 5 s, else the test fails.
    private func settledNames(_ index: SpreadFolderIndex) throws -> SpreadFolderIndex.Names {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            var checked: [FilePath: SpreadFolderIndex.Names?] = [:]
            if let names = index.names(in: folder, checked: &checked) { return names }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTFail("the index never answered for a folder left unchanged for 5 s")
        throw CocoaError(.fileReadUnknown)
    }

    private func contains(_ name: String, _ index: SpreadFolderIndex) -> Bool? {
        var checked: [FilePath: SpreadFolderIndex.Names?] = [:]
        return index.contains(name, in: folder, checked: &checked)
    }

    func testAFolderFirstSeenNowIsNotKnownAndAMissingOneIsEmpty() {
        add("x.json")
        let index = SpreadFolderIndex(keeping: ".json")
        XCTAssertNil(contains("x.json", index), "seen for the first time: the file is opened")
        XCTAssertNil(contains("x.json", index), "seen unchanged for less than two seconds")
        var checked: [FilePath: SpreadFolderIndex.Names?] = [:]
        XCTAssertEqual(index.names(in: folder.appending("missing"), checked: &checked)?.count, 0)
        XCTAssertEqual(index.contains("x.json", in: folder.appending("missing"), checked: &checked), false)
    }

    func testASettledFolderIsReadOnceAndReadAgainWhenItChanges() throws {
        add("x.json")
        add("y.json")
        add("y.64.png")
        let index = SpreadFolderIndex(keeping: ".json")
        let names = try settledNames(index)
        XCTAssertEqual(names.count, 2, "only the names with the suffix are kept")
        XCTAssertTrue(names.contains("x.json") && names.contains("y.json"))
        let reads = index.folderReads.load(ordering: .relaxed)
        for _ in 0..<3 {  // kept: later passes look at the folder's status only
            XCTAssertEqual(contains("y.json", index), true)
            XCTAssertEqual(contains("z.json", index), false)
        }
        XCTAssertEqual(index.folderReads.load(ordering: .relaxed), reads)

        add("z.json")  // the folder changes: its status moves on
        XCTAssertNil(contains("z.json", index), "changed: not known until it settles again")
        XCTAssertEqual(try settledNames(index).count, 3)
        XCTAssertEqual(contains("z.json", index), true)
        try FileManager.default.removeItem(atPath: folder.appending("x.json").string)
        XCTAssertNotEqual(contains("y.json", index), false)
        let after = try settledNames(index)
        XCTAssertFalse(after.contains("x.json"))
        XCTAssertTrue(after.contains("y.json") && after.contains("z.json"))
    }

    /// One pass looks at a folder once: a file added during the pass is found in a later one.
    func testAPassLooksAtAFolderOnce() throws {
        let index = SpreadFolderIndex(keeping: ".json")
        _ = try settledNames(index)
        var checked: [FilePath: SpreadFolderIndex.Names?] = [:]
        XCTAssertEqual(index.contains("late.json", in: folder, checked: &checked), false)
        add("late.json")
        XCTAssertEqual(index.contains("late.json", in: folder, checked: &checked), false, "the pass's own answer")
        XCTAssertNotEqual(contains("late.json", index), false)
    }

    /// A folder replaced by another (same name, new inode) is a changed folder.
    func testAFolderReplacedByAnotherIsNotTakenForIt() throws {
        add("x.json")
        let index = SpreadFolderIndex(keeping: ".json")
        XCTAssertTrue(try settledNames(index).contains("x.json"))
        let other = folder.removingLastComponent().appending("other")
        try FileManager.default.createDirectory(atPath: other.string, withIntermediateDirectories: false)
        XCTAssertTrue(FileManager.default.createFile(atPath: other.appending("w.json").string, contents: Data()))
        try FileManager.default.removeItem(atPath: folder.string)
        try FileManager.default.moveItem(atPath: other.string, toPath: folder.string)
        XCTAssertNotEqual(contains("w.json", index), false)
        XCTAssertTrue(try settledNames(index).contains("w.json"))
    }
}
