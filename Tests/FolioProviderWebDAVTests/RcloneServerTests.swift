import FolioProviderWebDAV
import FolioTestServers
import Foundation
import XCTest

/// Issue 15: `rclone serve webdav` started on loopback (``RcloneServer``), its folder listing read back whole by the
/// multistatus reader, and what it does with ETags, conditional requests and dead properties measured against the
/// facts in ``RcloneServer``'s doc comment.
final class RcloneServerTests: XCTestCase {
    private var server: RcloneServer?

    override func tearDown() {
        server?.stop()
        server = nil
    }

    func testAFolderListedByRcloneIsReadBackWhole() throws {
        let server = try startOrSkip { try RcloneServer() }
        self.server = server
        try server.assertSampleFolderListing(fileETags: [.strong], folderETags: [.absent])
    }

    func testWhatRcloneDoesIsWhatItsDocCommentSays() throws {
        let server = try startOrSkip { try RcloneServer() }
        self.server = server
        let facts = try WebDAVServerFacts(probing: server)
        let expected = WebDAVServerFacts(
            fileETag: .strong, putReplyETag: .strong, getReplyETag: .strong, folderETag: .absent, lastModified: true,
            folderETagPropagates: false, ctag: false, syncCollectionStatus: 400, ifMatchWithListedETagSucceeds: true,
            ifMatchHonoured: false, ifNoneMatchHonoured: false, deleteIfMatchHonoured: false,
            moveOverwriteFalseHonoured: true, deadPropertiesKept: false, moveKeepsDeadProperties: false)
        XCTAssertEqual(facts, expected)
    }

    func testAServerWithAUserAsksForItsPassword() throws {
        let server = try startOrSkip { try RcloneServer(user: ("folio", "s3cret pass")) }
        self.server = server
        var anonymous = server.curl
        anonymous.credentials = nil
        let refused = try anonymous.request("PROPFIND", server.baseURL.absoluteString + "/", headers: ["Depth: 1"])
        XCTAssertEqual(refused.status, 401, refused.text)
        XCTAssertEqual(refused.headers["www-authenticate"]?.hasPrefix("Basic realm="), true, "\(refused.headers)")
        var wrong = server.curl
        wrong.credentials?.password = "wrong"
        let wrongReply = try wrong.request("PROPFIND", server.baseURL.absoluteString + "/", headers: ["Depth: 1"])
        XCTAssertEqual(wrongReply.status, 401, wrongReply.text)
        let listed = try server.request("PROPFIND", "/", headers: ["Depth: 1"])
        XCTAssertEqual(listed.status, 207, listed.text)
        XCTAssertNoThrow(try WebDAVMultistatus.parse(listed.body))
    }

    func testKilledAndStartedAgainItServesWhatItHad() throws {
        let server = try startOrSkip { try RcloneServer() }
        self.server = server
        try server.assertServesWhatItHadAfterAKill(deadProperties: false)
    }

    /// rclone's listing cache: a file put in the root behind its back is not seen by default, and is at once with
    /// `--dir-cache-time 0s`.
    func testAFileAddedBehindItsBackIsSeenOnlyWithoutTheListingCache() throws {
        for (cacheTime, expected) in [(nil, 404), ("0s", 200)] as [(String?, Int)] {
            let server = try startOrSkip { try RcloneServer(dirCacheTime: cacheTime) }
            self.server = server
            XCTAssertEqual(try server.request("MKCOL", "/D/").status, 201)
            XCTAssertEqual(try server.listing("/D/").members.count, 0)
            try Data("behind".utf8).write(to: URL(fileURLWithPath: server.documentRoot + "/D/behind.txt"))
            let members = try server.listing("/D/").members
            XCTAssertEqual(members.keys.sorted(), expected == 200 ? ["behind.txt"] : [], "\(cacheTime ?? "default")")
            XCTAssertEqual(try server.request("GET", "/D/behind.txt").status, expected, "\(cacheTime ?? "default")")
            server.stop()
            self.server = nil
        }
    }
}
