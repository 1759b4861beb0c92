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

    /// Issue 19: `Mount/updatedb-prune.sh` keeps `updatedb` off Folio mounts only when asked: it adds `fuse.folio`
    /// to PRUNEFS once (a second run changes nothing), adds the line where there is none, keeps the rest of the file,
    /// takes it out again with `--remove`, and refuses a file that does not exist.
    func testUpdatedbPruneAddsFolioOnceAndRemovesIt() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let script = repository + "/Mount/updatedb-prune.sh"
        let folder = NSTemporaryDirectory() + "folio-prune-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let conf = folder + "/updatedb.conf"
        try "PRUNE_BIND_MOUNTS=\"yes\"\nPRUNEFS=\"NFS afs\"\nPRUNEPATHS=\"/tmp\"\n".write(
            toFile: conf, atomically: true, encoding: .utf8)
        let read = { (try? String(contentsOfFile: conf, encoding: .utf8)) ?? "" }
        XCTAssertEqual(Shell.run("sh '\(script)' '\(conf)'").status, 0)
        XCTAssertEqual(read(), "PRUNE_BIND_MOUNTS=\"yes\"\nPRUNEFS = \"NFS afs fuse.folio\"\nPRUNEPATHS=\"/tmp\"\n")
        let again = Shell.run("sh '\(script)' '\(conf)'")
        XCTAssertEqual(again.status, 0)
        XCTAssertTrue(again.stdout.contains("already"), again.stdout)
        XCTAssertEqual(read().components(separatedBy: "fuse.folio").count, 2, "added once: \(read())")
        XCTAssertEqual(Shell.run("sh '\(script)' --remove '\(conf)'").status, 0)
        XCTAssertEqual(read(), "PRUNE_BIND_MOUNTS=\"yes\"\nPRUNEFS = \"NFS afs\"\nPRUNEPATHS=\"/tmp\"\n")

        try "PRUNEPATHS=\"/tmp\"\n".write(toFile: conf, atomically: true, encoding: .utf8)
        XCTAssertEqual(Shell.run("sh '\(script)' '\(conf)'").status, 0)
        XCTAssertEqual(read(), "PRUNEPATHS=\"/tmp\"\nPRUNEFS = \"fuse.folio\"\n")

        let missing = Shell.run("sh '\(script)' '\(folder)/none.conf'")
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("does not exist"), missing.stderr)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folder).sorted(), ["updatedb.conf"], "no file left over")
    }
}
