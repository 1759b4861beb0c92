import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// Issue 15, faults: what a status code does. A `503` or `429` is tried again after its `Retry-After` and then
/// succeeds, and so is a `500`, `502` or `504` to a read; a `503` every time gives up after
/// ``WebDAVConfiguration/attempts`` with a retryable error; a status that cannot turn out otherwise (`400`,
/// `401`, `403`, `404`, a `200` to `PROPFIND`) is never tried again; `507` is a full disk with the upload's
/// content kept; `401` says "authentication failed".
final class WebDAVStatusFaultTests: XCTestCase {
    private var fixture: FaultFixture!

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws { await fixture?.stop() }

    private var drive: String { FaultFixture.drive }
    private var server: MisbehavingServer { fixture.server }

    private var listing: MisbehavingServer.Reply {
        .answer(207, body: MultistatusBody.listing(drive, [MultistatusBody.response(drive + "a.txt", etag: "\"1\"")]))
    }

    /// The two requests to `PROPFIND` the Drive came at least `wait` apart (a lower bound only: it cannot fail
    /// on a slow machine, only on a client that did not wait).
    private func assertWaited(_ wait: Duration, file: StaticString = #filePath, line: UInt = #line) {
        let arrivals = server.requests("PROPFIND", drive).map(\.arrival)
        guard arrivals.count == 2 else { return XCTFail("\(arrivals.count) requests", file: file, line: line) }
        XCTAssertGreaterThanOrEqual(arrivals[1] - arrivals[0], wait, file: file, line: line)
    }

    func testA503WithRetryAfterIsTriedAgainAfterTheWaitAndSucceeds() async throws {
        server.on("PROPFIND", drive, .answer(503, headers: [("Retry-After", "1")]), listing)
        let items = try await fixture.listDrive(try fixture.provider())
        XCTAssertEqual(items.map(\.name), ["a.txt"])
        XCTAssertEqual(server.count("PROPFIND", drive), 2)
        assertWaited(.milliseconds(950))
    }

    func testA429WithRetryAfterIsTriedAgainAfterTheWaitAndSucceeds() async throws {
        server.on("PROPFIND", drive, .answer(429, headers: [("Retry-After", "1")]), listing)
        let items = try await fixture.listDrive(try fixture.provider())
        XCTAssertEqual(items.map(\.name), ["a.txt"])
        XCTAssertEqual(server.count("PROPFIND", drive), 2)
        assertWaited(.milliseconds(950))
    }

    func testA503EveryTimeGivesUpAfterTheAttemptsWithARetryableError() async throws {
        server.on("PROPFIND", drive, .answer(503))
        let provider = try fixture.provider(attempts: 3)
        let error = await folioError { try await self.fixture.listDrive(provider) }
        guard case .providerFailure(let message, retryable: true)? = error else {
            return XCTFail("\(String(describing: error))")
        }
        XCTAssertTrue(message.contains("503"), message)
        XCTAssertEqual(server.count("PROPFIND", drive), 3)
    }

    func testAServerErrorToAReadIsTriedAgainButNotToAWrite() async throws {
        // A read changes nothing, so a 500, 502 or 504 may be asked again at once; a PUT that failed so may
        // have done part of its work: the caller's own retries (with the version checks) take it.
        for status in [500, 502, 504] {
            server.on("PROPFIND", drive, .answer(status), listing)
            let before = server.count("PROPFIND", drive)
            let items = try await fixture.listDrive(try fixture.provider())
            XCTAssertEqual(items.map(\.name), ["a.txt"], "\(status)")
            XCTAssertEqual(server.count("PROPFIND", drive) - before, 2, "\(status)")
            await fixture.stop()
            fixture = try FaultFixture()
        }
        server.on("PUT", drive + "x", .answer(500))
        let reply = try await fixture.provider().client.send("PUT", drive + "x", body: .bytes(Data("x".utf8)))
        XCTAssertEqual(reply.status, 500)
        XCTAssertEqual(server.count("PUT", drive + "x"), 1)
    }

    func testARetryAfterLongerThanTheClientWaitsIsLeftToTheCaller() async throws {
        server.on("PUT", drive + "x", .answer(503, headers: [("Retry-After", "3600")]))
        let client = try fixture.provider().client
        let reply = try await client.send("PUT", drive + "x", body: .bytes(Data("x".utf8)))
        XCTAssertEqual(reply.status, 503)
        XCTAssertEqual(server.count("PUT", drive + "x"), 1, "not slept on for an hour")
    }

    func testAStatusThatCannotTurnOutOtherwiseIsNeverTriedAgain() async throws {
        let provider = try fixture.provider()
        for status in [400, 401, 403, 404, 405, 200] {
            server.on("PROPFIND", drive, .answer(status, body: Data("<html>no</html>".utf8)))
            let before = server.count("PROPFIND", drive)
            let error = await folioError { try await self.fixture.listDrive(provider) }
            XCTAssertEqual(server.count("PROPFIND", drive) - before, 1, "\(status) was tried again")
            switch (status, error) {
            case (401, .accessDenied?), (403, .accessDenied?), (404, .notFound?),
                (400, .providerFailure(_, retryable: false)?), (405, .providerFailure(_, retryable: false)?),
                (200, .providerFailure(_, retryable: false)?):
                break
            default:
                XCTFail("\(status): \(String(describing: error))")
            }
        }
    }

    func test401IsAccessDeniedSayingAuthenticationFailed() async throws {
        server.on("PROPFIND", drive, .answer(401, headers: [("WWW-Authenticate", #"Basic realm="dav""#)]))
        let error = await folioError { try await self.fixture.listDrive(try self.fixture.provider()) }
        guard case .accessDenied(let message)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message.contains("authentication failed"), message)
        XCTAssertEqual(server.count("PROPFIND", drive), 1)
    }

    func test507OnAnUploadIsNoSpaceAndTheContentIsKept() async throws {
        let content = Data(repeating: 7, count: 100_000)
        let file = fixture.state.appendingPathComponent("version")
        try content.write(to: file)
        // A new file is written to its staged name first (then moved to its name): that `PUT` is refused.
        let staged = drive + WebDAVProvider.stagingName(ItemID("new-1"))
        server.on("PROPFIND", drive + "new.txt", .answer(404))
        server.on("PUT", staged, .answer(507))
        server.on("PROPFIND", drive + "folder/", .answer(404))
        // A new folder is made under its staged name too.
        server.on("MKCOL", drive + WebDAVProvider.stagingName(ItemID("new-2")) + "/", .answer(507))
        let provider = try fixture.provider()
        let template = RemoteItemTemplate(
            id: ItemID("new-1"), container: .drive, parentID: nil, name: "new.txt", kind: .file,
            modificationTime: Timestamp(seconds: 1, nanoseconds: 0), mode: 0o644)
        let error = await folioError { try await provider.createItem(template, contents: .init(file.path)) }
        guard case .noSpace(let message)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message.contains("507"), message)
        XCTAssertEqual(server.count("PUT", staged), 1)
        XCTAssertEqual(server.requests("PUT", staged).first?.body, content, "the whole body was sent")
        XCTAssertEqual(try Data(contentsOf: file), content, "the version file is kept")
        var folder = template
        (folder.id, folder.name, folder.kind) = (ItemID("new-2"), "folder", .directory)
        let folderError = await folioError { try await provider.createItem(folder, contents: nil) }
        guard case .noSpace? = folderError else { return XCTFail("\(String(describing: folderError))") }
    }
}
