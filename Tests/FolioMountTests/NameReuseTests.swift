import Foundation
import XCTest

/// A name freed here and taken again at once (issue 36, found by an outside battery): the new item's create
/// reaches the remote after the delete of the old one it depends on, instead of clashing with the old name and
/// being retried (it was retried with no backoff: about 4,000 provider calls and log warnings a second until the
/// delete landed).
final class NameReuseTests: MountTestCase {
    /// How many uploads the daemon logged as refused because the name was taken.
    private var clashes: Int {
        fixture.log.split(separator: "\n").filter { $0.contains("upload failed") && $0.contains("already exists") }
            .count
    }

    func testAFolderMadeAgainWhereOneWasRemovedIsCreatedAfterTheDelete() throws {
        Shell.check("mkdir '\(fixture.path("d"))' && touch '\(fixture.path("d/f"))'")
        fixture.waitForUploads()
        let oldID = try XCTUnwrap(fixture.remoteItemID("d"))

        // `rm` of the file opens a save's window (an editor may write the file again), which holds its delete
        // and the folder's behind it for a few seconds: the new folder's create must wait, not clash.
        Shell.check("""
            cd '\(fixture.mountpoint)' && rm d/f && rmdir d && mkdir d && echo hello > d/g
            """)
        fixture.waitForUploads()

        XCTAssertEqual(fixture.remoteText("d/g"), "hello\n")
        XCTAssertEqual(fixture.remoteNames("d"), ["g"])
        XCTAssertNotEqual(fixture.remoteItemID("d"), oldID, "a new folder, not the old one")
        XCTAssertEqual(clashes, 0, "no create clashed with the freed name:\n\(fixture.log.suffix(3000))")
    }

    func testAFileMadeAgainByAnotherProgramWhereOneWasRemovedIsCreatedAfterTheDelete() throws {
        Shell.check("echo old > '\(fixture.path("n.txt"))'")
        fixture.waitForUploads()
        let oldID = try XCTUnwrap(fixture.remoteItemID("n.txt"))

        Shell.check("cd '\(fixture.mountpoint)' && rm n.txt && echo new > n.txt")
        fixture.waitForUploads()

        XCTAssertEqual(fixture.remoteText("n.txt"), "new\n")
        XCTAssertNotEqual(fixture.remoteItemID("n.txt"), oldID, "another program's file is a new item")
        XCTAssertEqual(clashes, 0, "no create clashed with the freed name:\n\(fixture.log.suffix(3000))")
    }
}
