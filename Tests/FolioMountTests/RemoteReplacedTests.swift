import Foundation
import XCTest

/// Issue 13: the remote folder goes away and an empty folder takes its place (what an unmounted share leaves
/// behind) while a document is edited. The provider is offline and says why; nothing disappears from the mount,
/// nothing is written into the empty folder, the edit waits (never `failed`) and lands once the folder is back,
/// without another edit.
final class RemoteReplacedTests: MountTestCase {
    /// The poller looks at the remote every second, so it meets the empty folder too.
    override var mountArguments: [String] { ["--poll-interval", "1"] }

    override func prepareRemote() throws {
        let drive = fixture.remote + "/com.folio.drive"
        Shell.check("""
            set -e
            mkdir -p '\(drive)/docs/deeper'
            echo 'kept' > '\(drive)/docs/kept.txt'
            echo 'only there' > '\(drive)/docs/deeper/placeholder.txt'
            """)
    }

    func testARemoteFolderReplacedByAnEmptyOneIsOfflineAndTheEditLandsWhenItIsBack() throws {
        let m = fixture.mountpoint
        let file = fixture.path("docs/kept.txt")
        XCTAssertEqual(Shell.check("cat '\(file)'"), "kept\n")
        let listing = Shell.check("cd '\(m)' && find . | sort")
        let away = fixture.root + "/remote-away"
        Shell.check("mv '\(fixture.remote)' '\(away)' && mkdir '\(fixture.remote)'")

        Shell.check("echo 'edited while the remote was away' > '\(file)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            let status = self.fixture.folio("status '\(m)'").stdout
            return status.contains("provider: OFFLINE: ") && status.contains("is not the remote any more")
        }, fixture.folio("status '\(m)'").stdout)
        // The poller met the empty folder too, and took nothing for deleted.
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.fixture.log.contains("provider offline: list containers: ")
        }, String(fixture.log.suffix(3000)))
        let status = fixture.folio("status '\(m)'").stdout
        XCTAssertFalse(status.contains("FAILED"), status)
        let stateNow = ExtendedAttributes.value("user.folio.state", of: file)
        XCTAssertTrue(["dirty", "uploading"].contains(stateNow), "state: \(stateNow ?? "none")")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.fixture.folio("status '\(file)'").stdout.contains("waiting:  provider offline: ")
        }, fixture.folio("status '\(file)'").stdout)
        XCTAssertEqual(Shell.check("cd '\(m)' && find . | sort"), listing, "no item disappeared")
        XCTAssertEqual(Shell.check("cat '\(file)'"), "edited while the remote was away\n")
        XCTAssertEqual(Shell.check("ls -A '\(fixture.remote)'"), "", "nothing written into the empty folder")

        // The folder is back: the edit lands by itself.
        Shell.check("rmdir '\(fixture.remote)' && mv '\(away)' '\(fixture.remote)'")
        fixture.waitForUploads(timeout: 60)
        XCTAssertEqual(fixture.remoteText("docs/kept.txt"), "edited while the remote was away\n")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.fixture.folio("status '\(m)'").stdout.contains("provider: online")
        }, fixture.folio("status '\(m)'").stdout)
        XCTAssertEqual(Shell.check("cd '\(m)' && find . | sort"), listing)
        XCTAssertEqual(Shell.check("cat '\(fixture.path("docs/deeper/placeholder.txt"))'"), "only there\n")
    }

    /// A state synced with a remote is never pointed at another folder: mounting it on an empty folder in the
    /// remote's place is refused with the reason, and neither the folder nor the state is changed.
    func testMountingOnAFolderThatIsNotTheRemoteIsRefusedAndChangesNothing() throws {
        XCTAssertEqual(Shell.check("cat '\(fixture.path("docs/kept.txt"))'"), "kept\n")
        fixture.stop()
        let away = fixture.root + "/remote-away"
        Shell.check("mv '\(fixture.remote)' '\(away)' && mkdir '\(fixture.remote)'")
        let refused = fixture.folio(
            "mount --foreground --remote '\(fixture.remote)' --state '\(fixture.state)' '\(fixture.mountpoint)'")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("is not the remote this state was synced with"), refused.stderr)
        XCTAssertEqual(Shell.check("ls -A '\(fixture.remote)'"), "", "the empty folder was not made a remote")

        Shell.check("rmdir '\(fixture.remote)' && mv '\(away)' '\(fixture.remote)'")
        try fixture.start()
        XCTAssertEqual(Shell.check("cat '\(fixture.path("docs/kept.txt"))'"), "kept\n")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("docs/deeper/placeholder.txt"))'"), "only there\n")
    }
}
