import Foundation
import XCTest

/// What a remote sends is not trusted (SECURITY.md): its symbolic links stay links that the daemon never
/// follows, and a name it cannot show does not stop the rest of the tree.
final class UntrustedRemoteTests: MountTestCase {
    override func prepareRemote() throws {
        let drive = fixture.remotePath("")
        try "a document".write(toFile: drive + "doc.txt", atomically: true, encoding: .utf8)
        for (name, target) in [("escape", "/etc/passwd"), ("system", "/etc"), ("up", "../../..")] {
            try FileManager.default.createSymbolicLink(atPath: drive + name, withDestinationPath: target)
        }
        Shell.check("touch '\(drive)'$'bad\\xff'")
    }

    func testRemoteSymlinksAreLinksNeverFollowed() throws {
        let m = fixture.mountpoint
        XCTAssertEqual(
            Shell.check("cd '\(m)' && stat -c '%n %F' escape system up"),
            "escape symbolic link\nsystem symbolic link\nup symbolic link\n")
        XCTAssertEqual(Shell.check("readlink '\(m)/escape' '\(m)/system' '\(m)/up'"), "/etc/passwd\n/etc\n../../..\n")
        XCTAssertEqual(Shell.check("cat '\(m)/doc.txt'"), "a document", "the rest of the tree is there")
        XCTAssertEqual(
            Shell.check("ls '\(m)'"), "doc.txt\nescape\nsystem\nup\n", "a name that is not UTF-8 is left out")

        // Pinning everything downloads what the remote holds, never what its links point at.
        XCTAssertEqual(fixture.folio("pin '\(m)'").status, 0)
        let downloaded = Shell.waitUntil(timeout: 60) {
            let states = (self.fixture.status()["summary"] as? [String: Any])?["states"] as? [String: Int]
            return states != nil && states?["placeholder"] == nil && states?["partial"] == nil
        }
        XCTAssertTrue(downloaded, "\(fixture.status())")
        let firstLine = Shell.check("head -1 /etc/passwd").trimmingCharacters(in: .newlines)
        XCTAssertEqual(Shell.run("grep -rlF '\(firstLine)' '\(fixture.state)'").stdout, "", "a link was followed")
        XCTAssertEqual(fixture.folio("status '\(m)'").status, 0)
    }
}
