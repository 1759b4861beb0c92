import Foundation
import XCTest

/// Issue 3 "Local content management" through the CLI and `setfattr` on a real mount.
class ContentManagementMountTests: MountTestCase {
    /// A cache limit of 2.5 MiB: three 1 MiB files do not all fit.
    override var mountArguments: [String] { ["--cache-limit", "2560K"] }

    override func prepareRemote() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("""
            set -e
            mkdir -p '\(drive)/Album' '\(drive)/Big'
            for i in 1 2 3; do echo "photo $i" > '\(drive)/Album/p'$i'.txt'; done
            for i in 1 2 3; do head -c $((1 << 20)) /dev/urandom > '\(drive)/Big/b'$i'.bin'; done
            """)
    }

    private func state(_ relative: String) -> String {
        Shell.run("getfattr --only-values -n user.folio.state '\(fixture.path(relative))'").stdout
    }

    private var cachedFiles: Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixture.state + "/content")) ?? [])
            .filter { $0 != "empty" }.count
    }

    func testDownloadEvictAndTheirRefusals() throws {
        let downloaded = fixture.folio("download '\(fixture.path("Album"))'")
        XCTAssertEqual(downloaded.status, 0, downloaded.stderr)
        XCTAssertTrue(downloaded.stdout.contains("downloaded 3 files"), downloaded.stdout)
        XCTAssertEqual(state("Album/p1.txt"), "materialized", "downloaded without being opened")

        let evicted = fixture.folio("evict '\(fixture.path("Album/p1.txt"))'")
        XCTAssertEqual(evicted.status, 0, evicted.stderr)
        XCTAssertEqual(state("Album/p1.txt"), "placeholder")
        XCTAssertEqual(
            Shell.check("cat '\(fixture.path("Album/p1.txt"))'"), "photo 1\n", "opened again: downloaded again")

        // A file with changes not uploaded yet is refused, with the reason; nothing is lost.
        Shell.check("echo 'edited' >> '\(fixture.path("Album/p2.txt"))'")
        let refused = fixture.folio("evict '\(fixture.path("Album/p2.txt"))'")
        if state("Album/p2.txt") != "materialized" {  // still dirty or uploading: the normal case
            XCTAssertNotEqual(refused.status, 0)
            XCTAssertTrue(refused.stderr.contains("has changes not uploaded yet"), refused.stderr)
        }
        XCTAssertEqual(Shell.check("cat '\(fixture.path("Album/p2.txt"))'"), "photo 2\nedited\n")
        let missing = fixture.folio("evict '\(fixture.path("Album/none.txt"))'")
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("not found"), missing.stderr)
    }

    func testPinnedFolderIsDownloadedAndKeepsWhatIsAddedLater() throws {
        Shell.check("setfattr -n user.folio.pinned -v 1 '\(fixture.path("Album"))'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) {
                ["p1", "p2", "p3"].allSatisfy { self.state("Album/\($0).txt") == "materialized" }
            },
            "pinned placeholders are downloaded in the background")
        XCTAssertEqual(
            Shell.check("getfattr --only-values -n user.folio.pinned '\(fixture.path("Album/p3.txt"))'"), "1")
        let refused = fixture.folio("evict '\(fixture.path("Album/p1.txt"))'")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("pinned"), refused.stderr)

        // Added on the remote later: pinned too, and downloaded after the next poll.
        try Data("photo 4\n".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Album/p4.txt")))
        XCTAssertTrue(
            Shell.waitUntil(timeout: 40) { self.state("Album/p4.txt") == "materialized" },
            fixture.log.suffix(2000).description)

        XCTAssertEqual(fixture.folio("unpin '\(fixture.path("Album"))'").status, 0)
        let evicted = fixture.folio("evict '\(fixture.path("Album"))'")
        XCTAssertEqual(evicted.status, 0, evicted.stderr)
        XCTAssertEqual(state("Album/p4.txt"), "placeholder")
    }

    func testCacheLimitEvictsLeastRecentlyUsedButNeverAnOpenFile() throws {
        let big = fixture.path("Big")
        // b1 is read whole and stays open for the whole test (an open alone fetches nothing); b2 and b3 are read
        // after it.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 3<'\(big)/b1.bin'; cat <&3 > /dev/null; read -r _ <&0"]
        let input = Pipe()
        holder.standardInput = input
        try holder.run()
        defer {
            try? input.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.state("Big/b1.bin") == "materialized" })
        Shell.check("cat '\(big)/b2.bin' > /dev/null; sleep 0.01; cat '\(big)/b3.bin' > /dev/null")
        // 3 MiB local, limit 2.5 MiB: the least recently used closed file (b2) goes; b1 is open.
        XCTAssertTrue(
            Shell.waitUntil(timeout: 20) { self.state("Big/b2.bin") == "placeholder" },
            fixture.log.suffix(2000).description)
        XCTAssertEqual(state("Big/b1.bin"), "materialized")
        XCTAssertEqual(state("Big/b3.bin"), "materialized")
        // The evicted version file leaves the cache with the next group write, after the state changed.
        XCTAssertTrue(
            Shell.waitUntil(timeout: 20) { self.cachedFiles == 2 },
            "the evicted version file is gone from the cache; files there: \(cachedFiles)")
    }
}
