import Foundation
import XCTest

/// `st_blocks` says what a file takes on this machine, as `du` users expect of cloud files: nothing for a
/// placeholder, the local content's blocks once materialized; `ls -l` keeps the document's size.
class PlaceholderBlocksTests: MountTestCase {
    override func prepareRemote() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("""
            set -e
            mkdir -p '\(drive)/cloud'
            head -c $((2 << 20)) /dev/urandom > '\(drive)/cloud/a.bin'
            head -c $((1 << 20)) /dev/urandom > '\(drive)/cloud/b.bin'
            """)
    }

    func testPlaceholdersTakeNoBlocks() throws {
        let cloud = fixture.path("cloud")
        XCTAssertEqual(Shell.check("stat -c '%s %b' '\(cloud)/a.bin' '\(cloud)/b.bin'"), "\(2 << 20) 0\n\(1 << 20) 0\n")
        XCTAssertEqual(Shell.check("du -sk '\(cloud)' | cut -f1"), "0\n", "a folder of placeholders uses nothing here")
        XCTAssertEqual(Shell.check("du -sk --apparent-size '\(cloud)' | cut -f1"), "\(3 << 10)\n")
        XCTAssertEqual(ExtendedAttributes.value("user.folio.state", of: cloud + "/a.bin"), "placeholder")

        Shell.check("cat '\(cloud)/a.bin' > /dev/null")
        let blocks = Int(Shell.check("stat -c %b '\(cloud)/a.bin'").trimmingCharacters(in: .newlines)) ?? -1
        XCTAssertGreaterThanOrEqual(blocks, (2 << 20) / 512, "a materialized file takes its content's blocks")
        XCTAssertLessThan(blocks, (3 << 20) / 512)
        XCTAssertEqual(Shell.check("stat -c '%s %b' '\(cloud)/b.bin'"), "\(1 << 20) 0\n", "still a placeholder")
        XCTAssertEqual(Shell.check("ls -l '\(cloud)' | awk 'NR > 1 { print $5 }'"), "\(2 << 20)\n\(1 << 20)\n")
        let evicted = fixture.folio("evict '\(cloud)/a.bin'")
        XCTAssertEqual(evicted.status, 0, evicted.stderr)
        XCTAssertEqual(Shell.check("stat -c '%s %b' '\(cloud)/a.bin'"), "\(2 << 20) 0\n", "a placeholder again")

        // A file written here takes its blocks while being written and once committed.
        let script = """
            import os, sys
            p = os.path.join(sys.argv[1], 'new.bin')
            fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
            os.write(fd, b'x' * (1 << 20))
            during = os.fstat(fd).st_blocks
            os.close(fd)
            print(during >= 2048, os.stat(p).st_blocks >= 2048)
            """
        XCTAssertEqual(Shell.check("python3 - '\(fixture.mountpoint)' <<'EOF'\n\(script)\nEOF"), "True True\n")
    }
}
