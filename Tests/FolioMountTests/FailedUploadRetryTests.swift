import Foundation
import XCTest

/// Issue 13: an upload refused for a reason that needs the user (access denied on the remote folder) is `failed`;
/// `folio status` says so and what to do; once it is fixed, `folio retry PATH` uploads it, and so does the next
/// mount.
final class FailedUploadRetryTests: MountTestCase {
    /// The daemon without root's power to ignore permissions, so a folder's mode bits refuse it.
    override var daemonLauncher: [String] {
        ["/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
    }

    override func prepareRemote() throws {
        Shell.check("mkdir -p '\(fixture.remotePath("docs"))'")
    }

    func testAnUploadRefusedForAccessNeedsTheUserAndIsUploadedByRetryAndByTheNextMount() throws {
        let m = fixture.mountpoint
        let docs = fixture.remotePath("docs")
        let first = fixture.path("docs/first.txt")
        Shell.check("chmod 0555 '\(docs)'")
        Shell.check("echo 'first' > '\(first)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            ExtendedAttributes.value("user.folio.state", of: first) == "failed"
        }, String(fixture.log.suffix(3000)))
        let status = fixture.folio("status '\(m)'").stdout
        XCTAssertTrue(status.contains("FAILED:   docs/first.txt: access denied: "), status)
        XCTAssertTrue(status.contains("needs you: the remote refuses access: give write access on the remote"), status)
        XCTAssertTrue(status.contains("folio retry"), status)
        XCTAssertTrue(status.contains("provider: online"), status)
        let item = fixture.folio("status '\(first)'").stdout
        XCTAssertTrue(item.contains("state:    failed"), item)
        XCTAssertTrue(item.contains("error:    access denied: "), item)

        // Fixed: `folio retry PATH` uploads it, without another edit.
        Shell.check("chmod 0755 '\(docs)'")
        let retry = fixture.folio("retry '\(first)'")
        XCTAssertEqual(retry.status, 0, retry.stderr)
        XCTAssertTrue(retry.stdout.contains("retrying 1 failed upload in docs/first.txt"), retry.stdout)
        fixture.waitForUploads(timeout: 60)
        XCTAssertEqual(fixture.remoteText("docs/first.txt"), "first\n")
        XCTAssertFalse(fixture.folio("status '\(m)'").stdout.contains("FAILED"))

        // Failed again, fixed while unmounted: the next mount uploads it.
        let second = fixture.path("docs/second.txt")
        Shell.check("chmod 0555 '\(docs)'")
        Shell.check("echo 'second' > '\(second)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            ExtendedAttributes.value("user.folio.state", of: second) == "failed"
        }, String(fixture.log.suffix(3000)))
        fixture.stop()
        Shell.check("chmod 0755 '\(docs)'")
        try fixture.start()
        fixture.waitForUploads(timeout: 60)
        XCTAssertEqual(fixture.remoteText("docs/second.txt"), "second\n")
        XCTAssertEqual(Shell.check("cat '\(second)'"), "second\n")
    }

    /// A folder create refused for access has no content to make `failed`: it is held for the user (not retried
    /// by itself), `folio status` lists it, `folio unmount --wait` does not wait for it, and the next mount
    /// creates it once it is fixed.
    func testARefusedFolderWaitsForTheUserAndUnmountWaitDoesNotWaitForIt() throws {
        let m = fixture.mountpoint
        let docs = fixture.remotePath("docs")
        Shell.check("chmod 0555 '\(docs)'")
        Shell.check("mkdir '\(fixture.path("docs/sub"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.fixture.folio("status '\(m)'").stdout.contains("FAILED:   docs/sub: access denied: ")
        }, fixture.folio("status '\(m)'").stdout + String(fixture.log.suffix(3000)))
        let status = fixture.folio("status '\(m)'").stdout
        XCTAssertTrue(status.contains("uploads:  1 pending (1 need you), 0 in flight"), status)
        XCTAssertTrue(status.contains("folio retry"), status)

        // Other changes still go.
        Shell.check("echo 'top' > '\(fixture.path("top.txt"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.fixture.remoteText("top.txt") == "top\n" })

        let unmount = fixture.folio("unmount --wait '\(m)'", timeout: 60)
        XCTAssertEqual(unmount.status, 0, unmount.stderr)
        XCTAssertTrue(unmount.stdout.contains("not waiting for what needs you (1 upload)"), unmount.stdout)
        XCTAssertTrue(unmount.stdout.contains("1 upload is still queued"), unmount.stdout)
        fixture.stop()

        Shell.check("chmod 0755 '\(docs)'")
        try fixture.start()
        fixture.waitForUploads(timeout: 60)
        var isFolder: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.remotePath("docs/sub"), isDirectory: &isFolder))
        XCTAssertTrue(isFolder.boolValue)
    }
}
