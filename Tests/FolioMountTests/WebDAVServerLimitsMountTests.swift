import FolioTestServers
import Foundation
import XCTest

/// Issue 15: "a server that refuses [Folio's dead properties] still works (that metadata stays local, `folio
/// status` says so)", and a server that ignores conditional headers is detected once. A mount over `rclone serve
/// webdav`, which does neither, works, and `folio status` says what the server cannot do; over Apache it says
/// nothing of the kind (`WebDAVMountTests/testShellToolsThroughTheMountReachTheServer`).
final class WebDAVServerLimitsMountTests: XCTestCase {
    func testAServerThatKeepsNoPropertiesAndIgnoresConditionsWorksAndStatusSaysSo() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/fuse"), "needs /dev/fuse")
        // (No listing cache: the test's own look at the server's disk and the mount's polls see it as it is.)
        let server = try startOrSkip { try RcloneServer(dirCacheTime: "0s") }
        addTeardownBlock { server.stop() }
        XCTAssertEqual(try server.request("MKCOL", "/folio/").status, 201)
        let device = try MountFixture(
            extraArguments: ["--poll-interval", "1"], remote: server.baseURL.absoluteString + "/folio/")
        addTeardownBlock { device.tearDown() }
        try device.start()

        let note = device.path("note.txt")
        Shell.check("printf 'kept here' > '\(note)' && chmod 600 '\(note)' && touch -m -d @1000000000 '\(note)'")
        device.waitForUploads(timeout: 60)
        XCTAssertEqual(
            try? String(contentsOfFile: server.documentRoot + "/folio/com.folio.drive/note.txt", encoding: .utf8),
            "kept here")
        var status = ""
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) {
                status = device.folio("status '\(device.mountpoint)'").stdout
                return status.contains("LIMITED:")
            }, status)
        XCTAssertTrue(
            status.contains(
                "LIMITED:  the server keeps no properties: modes, times, tags and symlinks stay on this device"),
            status)
        XCTAssertTrue(status.contains("LIMITED:  the server ignores conditional requests"), status)
        XCTAssertTrue(status.contains("provider: online"), status)
        XCTAssertTrue(status.contains("uploads:  0 pending"), status)
        // The mode and time the server could not keep stay here, also after a poll listed the folder again (one
        // that brought a file another client put there).
        try "from elsewhere".write(
            toFile: server.documentRoot + "/folio/com.folio.drive/other.txt", atomically: false, encoding: .utf8)
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { FileManager.default.fileExists(atPath: device.path("other.txt")) },
            "the file put on the server never appeared")
        let attributes = try FileManager.default.attributesOfItem(atPath: note)
        XCTAssertEqual(attributes[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual((attributes[.modificationDate] as? Date)?.timeIntervalSince1970, 1_000_000_000)
        XCTAssertTrue(device.log.contains("the remote is limited: the server keeps no properties"), device.log)
    }
}
