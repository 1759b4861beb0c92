import FolioProviderWebDAV
import FolioTestServers
import Foundation
import XCTest

/// Issue 15: the reference server's facts (``ApacheServer``'s doc comment) measured, and its variants: Basic auth
/// on one location, TLS with a certificate made by the test, and a document root too small for an upload.
final class ApacheServerTests: XCTestCase {
    private var server: ApacheServer?

    override func tearDown() {
        server?.stop()
        server = nil
    }

    func testWhatApacheDoesIsWhatItsDocCommentSays() throws {
        let server = try startOrSkip { try ApacheServer() }
        self.server = server
        let facts = try WebDAVServerFacts(probing: server)
        let expected = WebDAVServerFacts(
            fileETag: .strong, putReplyETag: .absent, getReplyETag: .strong, folderETag: .strong, lastModified: true,
            folderETagPropagates: false, ctag: false, syncCollectionStatus: 501, ifMatchWithListedETagSucceeds: true,
            ifMatchHonoured: true, ifNoneMatchHonoured: true, deleteIfMatchHonoured: true,
            moveOverwriteFalseHonoured: true, deadPropertiesKept: true, moveKeepsDeadProperties: true)
        XCTAssertEqual(facts, expected)
    }

    func testAFolderListedByApacheHasTheSameShapeAsTheOtherServers() throws {
        let server = try startOrSkip { try ApacheServer() }
        self.server = server
        try server.assertSampleFolderListing(fileETags: [.strong, .weak], folderETags: [.strong, .weak])
    }

    /// A weak ETag (what Apache sends for a file changed within the last second, here dated in the future so it
    /// stays weak) never satisfies `If-Match`, even when it is the current one; the strong one does.
    func testAWeakETagNeverMatchesIfMatch() throws {
        let server = try startOrSkip { try ApacheServer() }
        self.server = server
        XCTAssertEqual(try server.request("PUT", "/f.txt", body: Data("one".utf8)).status, 201)
        let path = server.documentRoot + "/f.txt"
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(3600)], ofItemAtPath: path)
        let weak = try XCTUnwrap(try etag(server, "/f.txt"))
        XCTAssertTrue(weak.hasPrefix("W/\""), weak)
        let refused = try server.request("PUT", "/f.txt", headers: ["If-Match: \(weak)"], body: Data("two".utf8))
        XCTAssertEqual(refused.status, 412, refused.text)
        XCTAssertEqual(try server.request("GET", "/f.txt").text, "one")

        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-60)], ofItemAtPath: path)
        let strong = try XCTUnwrap(try etag(server, "/f.txt"))
        XCTAssertTrue(strong.hasPrefix("\""), strong)
        let accepted = try server.request("PUT", "/f.txt", headers: ["If-Match: \(strong)"], body: Data("two".utf8))
        XCTAssertEqual(accepted.status, 204, accepted.text)
        XCTAssertEqual(try server.request("GET", "/f.txt").text, "two")
    }

    func testBasicAuthOnOneLocationAsksForThePassword() throws {
        let server = try startOrSkip {
            try ApacheServer(basicAuth: ("folio", "s3cret pass"), protectedLocation: "/private/")
        }
        self.server = server
        try FileManager.default.createDirectory(
            atPath: server.documentRoot + "/private", withIntermediateDirectories: false)
        var anonymous = server.curl
        anonymous.credentials = nil
        let url = server.baseURL.absoluteString
        let refused = try anonymous.request("PROPFIND", url + "/private/", headers: ["Depth: 1"])
        XCTAssertEqual(refused.status, 401, refused.text)
        XCTAssertEqual(refused.headers["www-authenticate"], #"Basic realm="Folio test""#)
        var wrong = server.curl
        wrong.credentials?.password = "wrong"
        XCTAssertEqual(try wrong.request("PROPFIND", url + "/private/", headers: ["Depth: 1"]).status, 401)
        let listed = try server.request("PROPFIND", "/private/", headers: ["Depth: 1"])
        XCTAssertEqual(listed.status, 207, listed.text)
        XCTAssertEqual(try WebDAVMultistatus.parse(listed.body).responses.count, 1)
        let open = try anonymous.request("PROPFIND", url + "/", headers: ["Depth: 0"])
        XCTAssertEqual(open.status, 207, "only the one location is protected: \(open.text)")
    }

    func testTLSWithACertificateMadeForTheServerIsTrustedOnlyWithItsCAFile() throws {
        let server = try startOrSkip { try ApacheServer(tls: true) }
        self.server = server
        XCTAssertEqual(server.baseURL.scheme, "https")
        let caFile = try XCTUnwrap(server.caFile)
        XCTAssertTrue(try String(contentsOfFile: caFile, encoding: .utf8).contains("BEGIN CERTIFICATE"))
        var untrusting = server.curl
        untrusting.caFile = nil
        let refused = try untrusting.request("PROPFIND", server.baseURL.absoluteString + "/", headers: ["Depth: 1"])
        XCTAssertEqual(refused.status, 0)
        XCTAssertEqual(refused.exitCode, 60, "curl: the peer's certificate is not trusted")
        let listed = try server.request("PROPFIND", "/", headers: ["Depth: 1"])
        XCTAssertEqual(listed.status, 207, listed.text)
        XCTAssertNoThrow(try WebDAVMultistatus.parse(listed.body))
    }

    func testAPutBiggerThanTheDiskGets507AndKeepsWhatWasThere() throws {
        let server = try startOrSkip { try ApacheServer(rootSize: "4m") }
        self.server = server
        XCTAssertEqual(try server.request("PUT", "/kept.txt", body: Data("old".utf8)).status, 201)
        let big = Data(repeating: 0x61, count: 5 << 20)
        let new = try server.request("PUT", "/big.bin", body: big)
        XCTAssertEqual(new.status, 507, new.text)
        XCTAssertEqual(try server.request("GET", "/big.bin").status, 404, "nothing half-written is left")
        let over = try server.request("PUT", "/kept.txt", body: big)
        XCTAssertEqual(over.status, 507, over.text)
        XCTAssertEqual(try server.request("GET", "/kept.txt").text, "old")
        let fits = try server.request("PUT", "/fits.bin", body: Data(repeating: 0x62, count: 3 << 20))
        XCTAssertEqual(fits.status, 201, "the space of the failed uploads was freed: \(fits.text)")

        let root = server.documentRoot
        server.stop()
        self.server = nil
        let mounts = try String(contentsOfFile: "/proc/mounts", encoding: .utf8)
        XCTAssertFalse(mounts.contains(" \(root) "), "stop() unmounts the small root")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root))
    }

    func testKilledAndStartedAgainItServesWhatItHad() throws {
        let server = try startOrSkip { try ApacheServer() }
        self.server = server
        try server.assertServesWhatItHadAfterAKill(deadProperties: true)
    }

    private func etag(_ server: ApacheServer, _ path: String) throws -> String? {
        let reply = try server.request("PROPFIND", path, headers: ["Depth: 0"])
        return try WebDAVMultistatus.parse(reply.body).responses.first?.properties.entityTag
    }
}
