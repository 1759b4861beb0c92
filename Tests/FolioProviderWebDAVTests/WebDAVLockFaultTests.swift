import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import SystemPackage
import XCTest

/// Issue 15, faults: a server that says it locks (`DAV: 1, 2`) but grants a `LOCK` without a `Lock-Token`. The
/// write fails once with a retryable error, and is then sent without a lock: never an error retried forever.
final class WebDAVLockFaultTests: XCTestCase {
    private var fixture: FaultFixture!

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws { await fixture?.stop() }

    func testALockGrantedWithoutATokenIsRetriedOnceAndTheWriteGoesOnUnlocked() async throws {
        let drive = FaultFixture.drive
        let file = drive + "a.txt"
        let server = fixture.server
        server.on("OPTIONS", FaultFixture.base, .answer(200, headers: [("DAV", "1, 2")]))
        server.on("PROPFIND", drive, .answer(207, body: MultistatusBody.listing(
            drive, [MultistatusBody.response(file, etag: "\"1\"", length: 1)])))
        server.on("PROPFIND", file) { _ in
            let etag = server.count("PUT", file) == 0 ? "\"1\"" : "\"2\""
            return .answer(207, body: MultistatusBody.document([MultistatusBody.response(file, etag: etag, length: 5)]))
        }
        server.on("LOCK", file, .answer(200, body: Data("<D:prop xmlns:D=\"DAV:\"/>".utf8)))
        server.on("PUT", file, .answer(204, headers: [("ETag", "\"2\"")]))
        server.on("PROPPATCH", file, .answer(207, body: MultistatusBody.document([
            "<D:response><D:href>\(file)</D:href><D:propstat><D:prop/><D:status>HTTP/1.1 200 OK</D:status>"
                + "</D:propstat></D:response>"
        ])))
        let provider = try fixture.provider()
        let listed = try await fixture.listDrive(provider)
        let item = try XCTUnwrap(listed.first)
        let content = fixture.state.appendingPathComponent("content")
        try Data("later".utf8).write(to: content)

        let error = await folioError {
            try await provider.modifyItem(
                item.id, in: .drive, baseVersion: item.version, changes: RemoteItemChanges(),
                contents: FilePath(content.path))
        }
        guard case .providerFailure(let message, retryable: true)? = error else {
            return XCTFail("\(String(describing: error))")
        }
        XCTAssertTrue(message.contains("without a token"), message)
        XCTAssertEqual(server.count("PUT", file), 0, "nothing written under a lock nobody can name")

        let written = try await provider.modifyItem(
            item.id, in: .drive, baseVersion: item.version, changes: RemoteItemChanges(),
            contents: FilePath(content.path))
        XCTAssertEqual(written.size, 5)
        XCTAssertEqual(server.count("LOCK", file), 1, "not locked again")
        let put = try XCTUnwrap(server.requests("PUT", file).first)
        XCTAssertNil(put.header("If"), "no lock token sent")
        XCTAssertEqual(put.header("If-Match"), "\"1\"", "still on the condition of the version it replaces")
        XCTAssertEqual(put.body, Data("later".utf8))
    }
}
