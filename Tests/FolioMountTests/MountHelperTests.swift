import Foundation
import XCTest

/// `Mount/mount.folio` through mount(8): `mount -t fuse.folio`, options, an fstab line, `umount`.
final class MountHelperTests: XCTestCase {
    func testMountHelperEndToEnd() throws {
        try XCTSkipUnless(getuid() == 0 && FileManager.default.fileExists(atPath: "/dev/fuse"), "needs root and /dev/fuse")
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let result = Shell.run(
            "bash '\(repository)/Mount/test-mount-helper.sh'", timeout: 300,
            environment: ["FOLIO": MountFixture.executable])
        if result.status == 77 { throw XCTSkip("the helper test skipped itself: \(result.stdout)") }
        XCTAssertEqual(result.status, 0, "stdout:\n\(result.stdout)\nstderr:\n\(result.stderr)")
        XCTAssertTrue(result.stdout.contains("PASS") || result.stderr.contains("PASS"), result.stdout + result.stderr)
    }
}
