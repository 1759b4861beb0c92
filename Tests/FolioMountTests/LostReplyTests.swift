import Foundation
import XCTest

/// An upload that reached the remote although its answer never came back (lost on the way, or the daemon was
/// killed while it waited) is the daemon's own change: a later version of the same item, made meanwhile, is
/// uploaded over it, and a delete deletes it. Neither is a conflict, and no retry leaves the remote behind.
final class LostReplyTests: MountTestCase {
    override func prepareRemote() throws {
        Shell.check("echo 'first' > '\(fixture.remotePath("doc.txt"))'")
    }



    /// Writes `content` to `relative` through the mount, and waits until the remote has it (the upload
    /// landed, its answer is lost).
    private func writeAndWaitForTheRemote(_ relative: String, _ content: String) {
        Shell.check("printf '%s' '\(content)' > '\(fixture.path(relative))'")
        let landed = Shell.waitUntil(timeout: 30) { self.fixture.remoteText(relative) == content }
        XCTAssertTrue(landed, "\(relative) reached the remote")
    }

    /// Once the answers come back, the uploads finish with no conflict nor failure.
    private func assertSettles(file: StaticString = #filePath, line: UInt = #line) throws {
        try fixture.simulateNetwork(nil)
        fixture.waitForUploads(timeout: 60, file: file, line: line)
        let status = fixture.folio("status '\(fixture.mountpoint)'").stdout
        XCTAssertFalse(status.contains("conflicted"), status, file: file, line: line)
        XCTAssertFalse(status.contains("FAILED"), status, file: file, line: line)
    }

    func testAVersionWrittenAfterAnUploadWhoseAnswerWasLostReplacesIt() throws {
        XCTAssertEqual(Shell.check("cat '\(fixture.path("doc.txt"))'"), "first\n")
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("doc.txt", "second")
        Shell.check("printf 'third' > '\(fixture.path("doc.txt"))'")
        try assertSettles()
        XCTAssertEqual(fixture.remoteText("doc.txt"), "third")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("doc.txt"))'"), "third")
        XCTAssertTrue(fixture.log.contains("reply lost (simulated)"))
    }

    func testAVersionWrittenAfterATouchWhoseAnswerWasLostReplacesIt() throws {
        XCTAssertEqual(Shell.check("cat '\(fixture.path("doc.txt"))'"), "first\n")
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        // A new modification time alone is a new version on the remote.
        Shell.check("touch -d '2001-02-03 04:05:06' '\(fixture.path("doc.txt"))'")
        let touched = Shell.waitUntil(timeout: 30) {
            let attributes = try? FileManager.default.attributesOfItem(atPath: self.fixture.remotePath("doc.txt"))
            return (attributes?[.modificationDate] as? Date).map { $0 < Date(timeIntervalSince1970: 1e9) } ?? false
        }
        XCTAssertTrue(touched, "the new time reached the remote")
        Shell.check("printf 'third' > '\(fixture.path("doc.txt"))'")
        try assertSettles()
        XCTAssertEqual(fixture.remoteText("doc.txt"), "third")
    }

    func testADeleteAfterAnUploadWhoseAnswerWasLostDeletes() throws {
        XCTAssertEqual(Shell.check("cat '\(fixture.path("doc.txt"))'"), "first\n")
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("doc.txt", "second")
        // Offline, the upload's retries fail at once: the delete is made while no upload runs, so it is based on
        // the version before the lost answer.
        try goOffline()
        Shell.check("rm '\(fixture.path("doc.txt"))'")
        try assertSettles()
        XCTAssertNil(fixture.remoteText("doc.txt"), "deleted on the remote, not kept as someone else's change")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("doc.txt")))
    }

    func testANewVersionOfAFileWhoseCreateAnswerWasLostReachesTheRemote() throws {
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("new.txt", "created")
        Shell.check("printf 'changed' > '\(fixture.path("new.txt"))'")
        try assertSettles()
        XCTAssertEqual(fixture.remoteText("new.txt"), "changed", "the retried create sent the new content")
    }

    func testAFileWhoseCreateAnswerWasLostIsDeletedOnTheRemoteWhenDeletedHere() throws {
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("new.txt", "created")
        try goOffline()  // no retry runs while the file is deleted
        Shell.check("rm '\(fixture.path("new.txt"))'")
        try assertSettles()
        XCTAssertNil(fixture.remoteText("new.txt"), "deleted on the remote too")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("new.txt")), "and does not come back")
    }

    /// Goes offline and waits until an upload failed for it: no upload runs until back online.
    private func goOffline() throws {
        try fixture.simulateNetwork(#"{"offline": true}"#)
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.fixture.folio("status '\(self.fixture.mountpoint)'").stdout.contains("provider: OFFLINE")
        })
    }

    func testAFileRenamedAfterItsCreateAnswerWasLostIsRenamedOnTheRemote() throws {
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("new.txt", "created")
        try goOffline()
        Shell.check("mv '\(fixture.path("new.txt"))' '\(fixture.path("renamed.txt"))'")
        try assertSettles()
        XCTAssertEqual(
            fixture.remoteText("renamed.txt"), "created", "the retried create's item is moved to the new name")
        XCTAssertNil(fixture.remoteText("new.txt"))
        // A walk of the remote (made for a change there) agrees: the rename is not undone.
        Shell.check("echo 'nudge' > '\(fixture.remotePath("nudge.txt"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            FileManager.default.fileExists(atPath: self.fixture.path("nudge.txt"))
        })
        XCTAssertEqual(Shell.check("ls '\(fixture.mountpoint)'"), "doc.txt\nnudge.txt\nrenamed.txt\n")
    }

    func testAFileChangedOnTheRemoteAfterItsCreateAnswerWasLostIsKeptWhenDeletedHere() throws {
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("new.txt", "created")
        try goOffline()
        Shell.check("printf ' and theirs' >> '\(fixture.remotePath("new.txt"))'")
        Shell.check("rm '\(fixture.path("new.txt"))'")
        try assertSettles()
        XCTAssertEqual(fixture.remoteText("new.txt"), "created and theirs", "their change is not deleted unseen")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            (try? String(contentsOfFile: self.fixture.path("new.txt"), encoding: .utf8)) == "created and theirs"
        }, "and shows here again")
    }

    func testAFileCreatedWhileTheDaemonWasKilledIsDeletedOnTheRemoteWhenDeletedHere() throws {
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("new.txt", "created")
        fixture.kill9()
        try fixture.simulateNetwork(#"{"offline": true}"#)
        try fixture.start()
        Shell.check("rm '\(fixture.path("new.txt"))'")
        try assertSettles()
        XCTAssertNil(fixture.remoteText("new.txt"), "deleted on the remote too")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("new.txt")), "and does not come back")
    }

    func testAVersionWrittenAfterADaemonKilledWhileUploadingReplacesTheUpload() throws {
        XCTAssertEqual(Shell.check("cat '\(fixture.path("doc.txt"))'"), "first\n")
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("doc.txt", "second")
        fixture.kill9()
        try fixture.start()
        Shell.check("printf 'third' > '\(fixture.path("doc.txt"))'")
        try assertSettles()
        XCTAssertEqual(fixture.remoteText("doc.txt"), "third")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("doc.txt"))'"), "third")
    }

    func testARemoteEditAfterTheLostAnswerIsStillAConflict() throws {
        XCTAssertEqual(Shell.check("cat '\(fixture.path("doc.txt"))'"), "first\n")
        try fixture.simulateNetwork(#"{"lostReplyRate": 1}"#)
        writeAndWaitForTheRemote("doc.txt", "second")
        // Someone edits the remote file in place (its upload record stays on it, its version changes).
        Shell.check("printf ' and theirs' >> '\(fixture.remotePath("doc.txt"))'")
        Shell.check("printf 'third' > '\(fixture.path("doc.txt"))'")
        try fixture.simulateNetwork(nil)
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.fixture.folio("status '\(self.fixture.mountpoint)'").stdout.contains("conflicted")
        }, fixture.folio("status '\(fixture.mountpoint)'").stdout)
        XCTAssertEqual(fixture.remoteText("doc.txt"), "second and theirs", "their change is not overwritten")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("doc.txt"))'"), "third", "ours stays current")
    }
}
