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

    /// The names of `index`'s folder in a new pass, once the folder has settled (its last change two seconds
    /// back): a bounded poll of the clock, at most 5 s.
    private func settledNames(_ index: SpreadFolderIndex) throws -> Set<String> {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            var checked: [FilePath: Set<String>?] = [:]
            if let names = index.names(in: folder, checked: &checked) { return names }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw XCTSkip("the folder did not settle within 5 s")
    }

    func testAFolderJustChangedIsNotKnownAndAMissingOneIsEmpty() {
        add("x.json")
        let index = SpreadFolderIndex()
        var checked: [FilePath: Set<String>?] = [:]
        XCTAssertNil(index.contains("x.json", in: folder, checked: &checked), "changed this second: the file is opened")
        XCTAssertEqual(index.names(in: folder.appending("missing"), checked: &checked), [])
        XCTAssertEqual(index.contains("x.json", in: folder.appending("missing"), checked: &checked), false)
    }

    func testASettledFolderIsReadOnceAndReadAgainWhenItChanges() throws {
        add("x.json")
        add("y.json")
        let index = SpreadFolderIndex()
        XCTAssertEqual(try settledNames(index), ["x.json", "y.json"])

        let reads = index.folderReads.load(ordering: .relaxed)
        for _ in 0..<3 {  // kept: later passes look at the folder's status only
            var checked: [FilePath: Set<String>?] = [:]
            XCTAssertEqual(index.contains("y.json", in: folder, checked: &checked), true)
            XCTAssertEqual(index.contains("z.json", in: folder, checked: &checked), false)
        }
        XCTAssertEqual(index.folderReads.load(ordering: .relaxed), reads)

        add("z.json")  // the folder changes: its times move on
        var checked: [FilePath: Set<String>?] = [:]
        XCTAssertNotEqual(index.contains("z.json", in: folder, checked: &checked), false, "never absent when there")
        XCTAssertEqual(try settledNames(index), ["x.json", "y.json", "z.json"])
        try FileManager.default.removeItem(atPath: folder.appending("x.json").string)
        checked = [:]
        XCTAssertNotEqual(index.contains("y.json", in: folder, checked: &checked), false)
        XCTAssertEqual(try settledNames(index), ["y.json", "z.json"])
    }

    /// One pass looks at a folder once: a file added during the pass is found in the next.
    func testAPassLooksAtAFolderOnce() throws {
        let index = SpreadFolderIndex()
        _ = try settledNames(index)
        var checked: [FilePath: Set<String>?] = [:]
        XCTAssertEqual(index.contains("late.json", in: folder, checked: &checked), false)
        add("late.json")
        XCTAssertEqual(index.contains("late.json", in: folder, checked: &checked), false, "the pass's own answer")
        checked = [:]
        XCTAssertNotEqual(index.contains("late.json", in: folder, checked: &checked), false)
    }
}
