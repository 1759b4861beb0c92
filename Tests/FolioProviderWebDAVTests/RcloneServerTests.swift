import FolioProviderWebDAV
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
        let server = try RcloneServer()
        self.server = server
        try server.assertSampleFolderListing(fileETags: [.strong], folderETags: [.absent])
    }

    func testWhatRcloneDoesIsWhatItsDocCommentSays() throws {
        let server = try RcloneServer()
        self.server = server
        let facts = try WebDAVServerFacts(probing: server)
        let expected = WebDAVServerFacts(
            fileETag: .strong, putReplyETag: .strong, folderETag: .absent, lastModified: true,
            folderETagPropagates: false, ctag: false, syncCollectionStatus: 400, ifMatchWithListedETagSucceeds: true,
            ifMatchHonoured: false, ifNoneMatchHonoured: false, deleteIfMatchHonoured: false,
            moveOverwriteFalseHonoured: true, deadPropertiesKept: false, moveKeepsDeadProperties: false)
        XCTAssertEqual(facts, expected)
    }

    func testAServerWithAUserAsksForItsPassword() throws {
        let server = try RcloneServer(user: ("folio", "s3cret pass"))
        self.server = server
        var anonymous = server.curl
        anonymous.credentials = nil
        let refused = try anonymous.request("PROPFIND", server.baseURL.absoluteString + "/", headers: ["Depth: 1"])
        XCTAssertEqual(refused.status, 401, refused.text)
        var wrong = server.curl
        wrong.credentials?.password = "wrong"
        let wrongReply = try wrong.request("PROPFIND", server.baseURL.absoluteString + "/", headers: ["Depth: 1"])
        XCTAssertEqual(wrongReply.status, 401, wrongReply.text)
        let listed = try server.request("PROPFIND", "/", headers: ["Depth: 1"])
        XCTAssertEqual(listed.status, 207, listed.text)
        XCTAssertNoThrow(try WebDAVMultistatus.parse(listed.body))
    }
}
