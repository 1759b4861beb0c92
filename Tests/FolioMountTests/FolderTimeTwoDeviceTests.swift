import Foundation
import XCTest

/// A folder's time, sent again after a change inside it lands, carries only the time: another device's
/// rename and mode change of the folder stay. This device runs without push, so it learns of the other
/// device's change only after its own upload (the case where a re-send of all the folder's metadata would
/// undo it for sure).
final class FolderTimeTwoDeviceTests: MountTestCase {
    override var mountArguments: [String] { ["--no-push", "--poll-interval", "600"] }

    override func prepareRemote() throws {
        let drive = fixture.remote + "/com.folio.drive"
        Shell.check("mkdir -p '\(drive)/dir' && echo old > '\(drive)/dir/old.txt' && chmod 755 '\(drive)/dir'")
    }

    /// Permission bits of `path`, in octal.
    private func mode(_ path: String) -> String {
        Shell.run("stat -c %a '\(path)'").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func names(_ path: String) -> [String] {
        Shell.run("ls -A '\(path)'").stdout.split(separator: "\n").map(String.init)
    }

    func testAChildLandingHereDoesNotUndoAnotherDevicesRenameAndModeOfItsFolder() throws {
        XCTAssertEqual(names(fixture.path("dir")), ["old.txt"])
        let other = try MountFixture(extraArguments: ["--poll-interval", "600"], remote: fixture.remote)
        addTeardownBlock { other.tearDown() }
        try other.start()
        Shell.check("mv '\(other.path("dir"))' '\(other.path("renamed-elsewhere"))'")
        Shell.check("chmod 700 '\(other.path("renamed-elsewhere"))'")
        other.waitForUploads()
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.mode(self.fixture.remotePath("renamed-elsewhere")) == "700"
        }, "the other device's change did not reach the remote: \(names(fixture.remotePath("")))")

        // Here the folder is still `dir` (no push): a new file in it lands, and the folder's time goes after it.
        Shell.check("echo new > '\(fixture.path("dir/new.txt"))'")
        fixture.waitForUploads()
        XCTAssertFalse(names(fixture.remotePath("")).contains("dir"), "the other device's rename was undone")
        XCTAssertEqual(mode(fixture.remotePath("renamed-elsewhere")), "700", "the other device's mode was undone")
        XCTAssertEqual(names(fixture.remotePath("renamed-elsewhere")), ["new.txt", "old.txt"])

        // Both devices end up with the other device's name and mode, and both files.
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.names(other.path("renamed-elsewhere")) == ["new.txt", "old.txt"]
        }, "other device: \(names(other.path("renamed-elsewhere")))")
        XCTAssertFalse(names(other.path("")).contains("dir"))
        XCTAssertEqual(mode(other.path("renamed-elsewhere")), "700")
        fixture.stop()
        try fixture.start()
        XCTAssertFalse(names(fixture.path("")).contains("dir"))
        XCTAssertEqual(names(fixture.path("renamed-elsewhere")), ["new.txt", "old.txt"])
        XCTAssertEqual(mode(fixture.path("renamed-elsewhere")), "700")
        XCTAssertEqual(fixture.pendingUploads, 0)
    }
}
