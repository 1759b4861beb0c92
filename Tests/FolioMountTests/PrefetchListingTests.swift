import Foundation
import XCTest

/// A remote of nested folders, and what `folio status` says of their listings.
class NestedFoldersTestCase: MountTestCase {
    /// Folders in the remote: three levels, two wide, each with two files.
    static let folders = ["a", "b", "a/a", "a/b", "b/a", "b/b", "a/a/a", "a/a/b", "b/b/a", "b/b/b"]

    override func prepareRemote() throws {
        for folder in Self.folders {
            let path = fixture.remotePath(folder)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for file in ["one.txt", "two.txt"] {
                try "\(folder)/\(file)\n".write(toFile: "\(path)/\(file)", atomically: false, encoding: .utf8)
            }
        }
    }

    /// `folio status --json`'s count of folders not listed yet.
    var foldersNotListed: Int? {
        (fixture.status()["summary"] as? [String: Any])?["foldersNotListed"] as? Int
    }

    var foldersListed: Int? {
        (fixture.status()["summary"] as? [String: Any])?["foldersListed"] as? Int
    }
}

/// `folio mount --prefetch-listing` (issue 36): the tree is listed in the background after the mount, a few
/// folders at a time, without downloading anything, so a walk after it is answered from memory.
final class PrefetchListingTests: NestedFoldersTestCase {
    override var mountArguments: [String] { ["--prefetch-listing"] }

    func testTheTreeIsListedInTheBackgroundAndNothingIsDownloaded() throws {
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { self.foldersNotListed == 0 },
                      "every folder is listed without a look; status: \(fixture.status())")
        XCTAssertEqual(foldersListed, Self.folders.count + 1, "the root and every folder")
        let files = Shell.check("find '\(fixture.mountpoint)' -type f -name '*.txt' | sort")
        XCTAssertEqual(files.split(separator: "\n").count, Self.folders.count * 2)
        for folder in Self.folders {
            let state = ExtendedAttributes.value("user.folio.state", of: fixture.path("\(folder)/one.txt"))
            XCTAssertEqual(state, "placeholder", "\(folder): listed, not downloaded")
        }
    }
}

/// The same remote mounted without `--prefetch-listing`: a folder is listed when it is first looked at.
final class ListingOnDemandTests: NestedFoldersTestCase {
    func testFoldersWaitForAFirstLook() throws {
        XCTAssertTrue(Shell.waitUntil(timeout: 10) { (self.foldersListed ?? 0) >= 1 }, "the root is listed at mount")
        XCTAssertGreaterThan(foldersNotListed ?? 0, 0, "the folders below wait for a look")
    }
}
