import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// Issue 13: the remote runs out of space. An upload then waits (dirty, `folio status` says why and what would
/// fix it), is retried by itself and lands once there is room again; it is never `failed`.
final class RemoteFullTests: MountTestCase {
    override func prepareRemote() throws {
        // The remote on a 4 MiB tmpfs of its own.
        Shell.check("mount -t tmpfs -o size=4m folio-test-remote '\(fixture.remote)'")
        addTeardownBlock { [remote = fixture.remote] in
            Shell.run("umount -l '\(remote)' 2>/dev/null; true")
        }
        try LocalProvider.initialize(at: FilePath(fixture.remote))
    }

    func testAnUploadThatFindsTheRemoteFullWaitsAndLandsOnceThereIsRoom() throws {
        let m = fixture.mountpoint
        let filler = fixture.remote + "/.folio/filler"
        Shell.run("cat /dev/zero > '\(filler)' 2>/dev/null")
        let file = fixture.path("report.txt")
        Shell.check("echo 'written while the remote is full' > '\(file)'")

        var states: Set<String> = []
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            states.insert(ExtendedAttributes.value("user.folio.state", of: file) ?? "?")
            return self.fixture.folio("status '\(m)'").stdout.contains("WAITING:  report.txt: no space: ")
        }, fixture.folio("status '\(m)'").stdout + String(fixture.log.suffix(3000)))
        let status = fixture.folio("status '\(m)'").stdout
        XCTAssertTrue(status.contains("the remote is out of space: free some there"), status)
        XCTAssertFalse(status.contains("FAILED"), status)
        // Retried by itself while it waits (the backoff is capped), still never failed.
        let attempts = fixture.log.components(separatedBy: "create report.txt").count
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            states.insert(ExtendedAttributes.value("user.folio.state", of: file) ?? "?")
            return self.fixture.log.components(separatedBy: "create report.txt").count > attempts + 1
        }, String(fixture.log.suffix(3000)))
        XCTAssertNil(fixture.remoteText("report.txt"))

        Shell.check("rm '\(filler)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            states.insert(ExtendedAttributes.value("user.folio.state", of: file) ?? "?")
            return self.fixture.pendingUploads == 0
        }, String(fixture.log.suffix(3000)))
        XCTAssertEqual(fixture.remoteText("report.txt"), "written while the remote is full\n")
        XCTAssertFalse(states.contains("failed"), "\(states)")
        XCTAssertFalse(fixture.folio("status '\(m)'").stdout.contains("WAITING"))
    }
}
