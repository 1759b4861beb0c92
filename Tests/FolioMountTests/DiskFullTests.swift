import Foundation
import XCTest

/// Issue 3: the disk of the content cache fills up. Writes fail with `ENOSPC`, committed versions stay intact,
/// the daemon stays up and works again once there is room.
class DiskFullTests: MountTestCase {
    override func prepareRemote() throws {
        // The state folder (metadata and content cache) on a 6 MiB tmpfs of its own.
        Shell.check("mount -t tmpfs -o size=6m folio-test-full '\(fixture.state)'")
        addTeardownBlock { [state = fixture.state] in
            Shell.run("umount -l '\(state)' 2>/dev/null; true")
        }
    }

    func testWritesFailWithENOSPCAndNothingCommittedIsLost() throws {
        let m = fixture.mountpoint
        Shell.check("head -c $((1 << 20)) /dev/urandom > '\(m)/kept.bin'")
        let kept = Shell.check("md5sum < '\(m)/kept.bin'")
        let script = """
            import errno, os, sys
            written = 0
            try:
                with open(sys.argv[1], 'wb') as f:
                    for _ in range(16):
                        f.write(os.urandom(1 << 20)); f.flush(); written += 1
                print('no error')
            except OSError as e:
                print(errno.errorcode.get(e.errno, e.errno))
            """
        let scriptPath = fixture.root + "/fill.py"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        XCTAssertEqual(Shell.check("python3 '\(scriptPath)' '\(m)/big.bin'"), "ENOSPC\n")

        XCTAssertTrue(fixture.daemon?.isRunning ?? false, "the daemon stays up")
        XCTAssertEqual(Shell.check("md5sum < '\(m)/kept.bin'"), kept, "a committed version is intact")
        XCTAssertEqual(fixture.folio("status '\(m)'").status, 0)

        // Room again: everything works.
        Shell.check("rm -f '\(m)/big.bin'")
        XCTAssertTrue(Shell.waitUntil(timeout: 20) {
            Shell.run("echo 'after' > '\(m)/after.txt'").status == 0
        }, fixture.log.suffix(2000).description)
        XCTAssertEqual(Shell.check("cat '\(m)/after.txt'"), "after\n")
        fixture.waitForUploads()
        XCTAssertEqual(Shell.check("md5sum < '\(fixture.remotePath("kept.bin"))'"), kept)
    }
}
