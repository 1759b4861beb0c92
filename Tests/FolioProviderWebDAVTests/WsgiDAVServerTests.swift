import FolioProviderWebDAV
import Foundation
import XCTest

/// Issue 15: wsgidav started on loopback (``WsgiDAVServer``), its folder listing read back whole by the
/// multistatus reader, and what it does with ETags, conditional requests and dead properties measured against the
/// facts in ``WsgiDAVServer``'s doc comment.
final class WsgiDAVServerTests: XCTestCase {
    private var server: WsgiDAVServer?

    override func tearDown() {
        server?.stop()
        server = nil
    }

    func testAFolderListedByWsgiDAVIsReadBackWhole() throws {
        let server = try WsgiDAVServer()
        self.server = server
        try server.assertSampleFolderListing(fileETags: [.unquoted], folderETags: [.absent])
    }

    func testWhatWsgiDAVDoesIsWhatItsDocCommentSays() throws {
        let server = try WsgiDAVServer()
        self.server = server
        let facts = try WebDAVServerFacts(probing: server)
        let expected = WebDAVServerFacts(
            fileETag: .unquoted, putReplyETag: .strong, getReplyETag: .strong, folderETag: .absent, lastModified: true,
            folderETagPropagates: false, ctag: false, syncCollectionStatus: 405, ifMatchWithListedETagSucceeds: true,
            ifMatchHonoured: true, ifNoneMatchHonoured: true, deleteIfMatchHonoured: true,
            moveOverwriteFalseHonoured: true, deadPropertiesKept: true, moveKeepsDeadProperties: true)
        XCTAssertEqual(facts, expected)
    }

    func testAServerWithAUserAsksForItsPassword() throws {
        let server = try WsgiDAVServer(user: ("folio", "s3cret pass"))
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
        try XCTSkipUnless(
            WsgiDAVServer.flushesProperties, "python3-gdbm is not installed (scripts/bootstrap installs it)")
        let server = try WsgiDAVServer()
        self.server = server
        try server.assertServesWhatItHadAfterAKill(deadProperties: true)
    }
}
