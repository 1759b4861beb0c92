import Foundation
import XCTest

/// Issue 14: what needs a subtree listed lists it first — a pinned folder (in the background) and `folio download`
/// of a folder — also for folders nobody looked into yet.
class OnDemandContentTests: MountTestCase {
    override func prepareRemote() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("""
            set -e
            mkdir -p '\(drive)/Pinned/sub/deeper' '\(drive)/Fetched/sub/deeper'
            for top in Pinned Fetched; do
                echo "$top top" > '\(drive)/'$top'/top.txt'
                echo "$top sub" > '\(drive)/'$top'/sub/mid.txt'
                echo "$top deeper" > '\(drive)/'$top'/sub/deeper/low.txt'
            done
            """)
    }

    private var summary: [String: Any] { fixture.status()["summary"] as? [String: Any] ?? [:] }

    /// The state of a file, read without listing anything on the way (a path the control socket resolves after
    /// the fact would list it).
    private func state(_ relative: String) -> String {
        Shell.run("getfattr --only-values -n user.folio.state '\(fixture.path(relative))'").stdout
    }

    func testAPinnedFolderIsListedAllTheWayDownAndDownloaded() throws {
        XCTAssertEqual(summary["foldersNotListed"] as? Int, 2, "Pinned and Fetched are not listed: \(summary)")
        Shell.check("setfattr -n user.folio.pinned -v 1 '\(fixture.path("Pinned"))'")
        // Nothing here looks into the folder: the keeper lists it, then its subfolders, and downloads.
        // (Folders count as materialized: Pinned, sub, deeper and Fetched, with the three files.)
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            (self.summary["states"] as? [String: Int])?["materialized"] == 7
        }, "\(summary)")
        XCTAssertEqual(summary["foldersNotListed"] as? Int, 1, "only Fetched is not listed: \(summary)")
        XCTAssertEqual(state("Pinned/sub/deeper/low.txt"), "materialized")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("Pinned/sub/deeper/low.txt"))'"), "Pinned deeper\n")
        XCTAssertEqual(state("Fetched/top.txt"), "placeholder")
    }

    func testDownloadOfAFolderListsWhatItHolds() throws {
        let downloaded = fixture.folio("download '\(fixture.path("Fetched"))'")
        XCTAssertEqual(downloaded.status, 0, downloaded.stderr)
        XCTAssertTrue(downloaded.stdout.contains("downloaded 3 files"), downloaded.stdout)
        XCTAssertEqual(state("Fetched/sub/deeper/low.txt"), "materialized")
        XCTAssertEqual((summary["foldersNotListed"] as? Int), 1, "Pinned is still not listed: \(summary)")
    }
}
