import Foundation
import XCTest

/// Issue 3 "Offline and faults" on a real mount: the provider goes away and comes back; an upload the
/// provider refuses after `close()` returned is reported, never silent.
final class OfflineTests: MountTestCase {
    override func prepareRemote() throws {
        let drive = fixture.remote + "/com.folio.drive"
        Shell.check("""
            set -e
            mkdir -p '\(drive)/docs'
            echo 'kept here' > '\(drive)/docs/local.txt'
            echo 'not here yet' > '\(drive)/docs/remote.txt'
            """)
    }



    func testOfflineProviderKeepsLocalWorkAndDrainsTheQueueInOrderWhenBack() throws {
        XCTAssertEqual(Shell.check("cat '\(fixture.path("docs/local.txt"))'"), "kept here\n")
        try fixture.simulateNetwork(#"{"offline": true}"#)

        // A placeholder fails fast, with ENETDOWN and a log line that says why.
        let started = Date()
        let refused = Shell.run("cat '\(fixture.path("docs/remote.txt"))'")
        XCTAssertTrue(refused.stderr.contains("Network is down"), refused.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "fails fast, no long time-out")
        XCTAssertTrue(fixture.log.contains("offline"), "the log says the provider is offline")

        // Materialized files keep working; writes commit locally and wait, in order.
        XCTAssertEqual(Shell.check("cat '\(fixture.path("docs/local.txt"))'"), "kept here\n")
        for version in 1...3 { Shell.check("echo 'version \(version)' > '\(fixture.path("docs/local.txt"))'") }
        Shell.check("echo 'made offline' > '\(fixture.path("docs/new.txt"))'")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("docs/local.txt"))'"), "version 3\n")
        XCTAssertTrue(Shell.waitUntil(timeout: 20) {
            let status = self.fixture.folio("status '\(self.fixture.mountpoint)'").stdout
            return status.contains("provider: OFFLINE") && !status.contains("uploads:  0 pending")
        }, fixture.folio("status '\(fixture.mountpoint)'").stdout)
        XCTAssertEqual(fixture.remoteText("docs/local.txt"), "kept here\n", "nothing reached the remote")
        XCTAssertNil(fixture.remoteText("docs/new.txt"))

        // Back online: the queue drains; the remote ends with the last committed version of each item.
        try fixture.simulateNetwork(nil)
        fixture.waitForUploads(timeout: 60)
        XCTAssertEqual(fixture.remoteText("docs/local.txt"), "version 3\n")
        XCTAssertEqual(fixture.remoteText("docs/new.txt"), "made offline\n")
        XCTAssertTrue(fixture.folio("status '\(fixture.mountpoint)'").stdout.contains("provider: online"))
        XCTAssertEqual(Shell.check("cat '\(fixture.path("docs/remote.txt"))'"), "not here yet\n")
    }

    func testUploadRefusedAfterCloseIsReportedByStatusAndByTheNextFsync() throws {
        try fixture.simulateNetwork(#"{"rejectWrites": true}"#)
        let file = fixture.path("docs/report.txt")
        Shell.check("echo 'draft' > '\(file)'")  // close() returns 0: the commit is local
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            Shell.run("getfattr --only-values -n user.folio.state '\(file)'").stdout == "failed"
        }, fixture.log.suffix(2000).description)
        let status = fixture.folio("status '\(fixture.mountpoint)'").stdout
        XCTAssertTrue(status.contains("FAILED:   docs/report.txt:"), status)
        XCTAssertTrue(status.contains("refuses the upload"), status)
        let item = fixture.folio("status '\(file)'").stdout
        XCTAssertTrue(item.contains("state:    failed"), item)
        XCTAssertTrue(item.contains("error:    "), item)

        // The next fsync of it returns the error (EIO), as a failed write-back would.
        let fsync = "import os,sys\nfd=os.open(sys.argv[1], os.O_RDONLY)\ntry:\n  os.fsync(fd); print('ok')\n"
            + "except OSError as e: print(e.errno)"
        XCTAssertEqual(Shell.check("python3 -c \"\(fsync)\" '\(file)'"), "5\n")
        XCTAssertEqual(Shell.check("cat '\(file)'"), "draft\n", "the local version is kept")

        // Once the provider accepts it again, the next save uploads and the failure is gone.
        try fixture.simulateNetwork(nil)
        Shell.check("echo 'final' > '\(file)'")
        fixture.waitForUploads(timeout: 60)
        XCTAssertEqual(fixture.remoteText("docs/report.txt"), "final\n")
        XCTAssertEqual(Shell.check("python3 -c \"\(fsync)\" '\(file)'"), "ok\n")
        XCTAssertFalse(fixture.folio("status '\(fixture.mountpoint)'").stdout.contains("FAILED"))
    }
}
