import FolioTestServers
import Foundation
import XCTest

/// Issue 15: every kind of real server starts with a user, refuses a request without the password, and stores and
/// serves a file with it: the shape of a suite that runs against all of them.
final class WebDAVServerKindTests: XCTestCase {
    private var servers: [WebDAVTestServer] = []

    override func tearDown() {
        for server in servers { server.stop() }
        servers = []
    }

    func testEveryKindServesAFileOnlyToItsUser() throws {
        for kind in WebDAVServerKind.allCases {
            let server = try kind.start(user: ("folio", "pass word"))
            servers.append(server)
            var anonymous = server.curl
            anonymous.credentials = nil
            let refused = try anonymous.request("PUT", server.baseURL.absoluteString + "/f.txt", body: Data("x".utf8))
            XCTAssertEqual(refused.status, 401, "\(kind): \(refused.text)")
            XCTAssertEqual(try server.request("PUT", "/f.txt", body: Data("mine".utf8)).status, 201, "\(kind)")
            XCTAssertEqual(try server.request("GET", "/f.txt").text, "mine", "\(kind)")
            XCTAssertEqual(try anonymous.request("GET", server.baseURL.absoluteString + "/f.txt").status, 401)
        }
    }
}
