import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// Issue 15, faults: a `412` to a conditional request (`If-Match`) while the resource is still at the version the
/// condition names. Apache does this in the second after a write, when its tag of the file is weak (a weak tag never
/// matches), and the look that follows can already find the tag strong again: the crash battery over Apache had a
/// delete refused as "changed on the server" that way, so the deleted file came back. Such a refusal is sent once
/// more; refused again while unchanged it is `.busy` (tried later), never a conflict, and never sent without its
/// condition.
final class WebDAVConditionFaultTests: XCTestCase {
    private var fixture: FaultFixture!

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws { await fixture?.stop() }

    private let drive = FaultFixture.drive
    private var file: String { drive + "a.txt" }

    /// Scripts a Drive holding `a.txt` at the strong tag `"1"`, listed the same before and after any request.
    private func listedFile() async throws -> (WebDAVProvider, RemoteItem) {
        let server = fixture.server
        let file = file
        server.on("PROPFIND", drive, .answer(207, body: MultistatusBody.listing(
            drive, [MultistatusBody.response(file, etag: "\"1\"", length: 1)])))
        server.on("PROPFIND", file, .answer(207, body: MultistatusBody.document([
            MultistatusBody.response(file, etag: "\"1\"", length: 1)
        ])))
        let provider = try fixture.provider()
        let listed = try await fixture.listDrive(provider)
        let item = try XCTUnwrap(listed.first)
        return (provider, item)
    }

    func testADeleteRefusedThoughUnchangedIsSentOnceMoreWithItsCondition() async throws {
        let (provider, item) = try await listedFile()
        fixture.server.on("DELETE", file, .answer(412), .answer(204))

        try await provider.deleteItem(item.id, in: .drive, baseVersion: item.version, retryTag: nil)

        let deletes = fixture.server.requests("DELETE", file)
        XCTAssertEqual(deletes.count, 2, "sent once more after the refusal")
        XCTAssertEqual(deletes.map { $0.header("If-Match") }, ["\"1\"", "\"1\""], "both on the condition")
    }

    func testADeleteRefusedTwiceThoughUnchangedIsBusyNotAConflict() async throws {
        let (provider, item) = try await listedFile()
        fixture.server.on("DELETE", file, .answer(412))

        let error = await folioError {
            try await provider.deleteItem(item.id, in: .drive, baseVersion: item.version, retryTag: nil)
        }
        guard case .busy(let message)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message.contains("412"), message)
        let deletes = fixture.server.requests("DELETE", file)
        XCTAssertEqual(deletes.count, 2)
        XCTAssertTrue(deletes.allSatisfy { $0.header("If-Match") == "\"1\"" }, "never sent without its condition")
    }

    func testADeleteRefusedBecauseTheFileChangedIsStillAConflict() async throws {
        let (provider, item) = try await listedFile()
        let server = fixture.server
        let file = file
        server.on("DELETE", file, .answer(412))
        // Written by someone else meanwhile: the look after the refusal finds another tag.
        server.on("PROPFIND", file) { _ in
            let etag = server.count("DELETE", file) == 0 ? "\"1\"" : "\"2\""
            return .answer(207, body: MultistatusBody.document([MultistatusBody.response(file, etag: etag, length: 1)]))
        }

        let error = await folioError {
            try await provider.deleteItem(item.id, in: .drive, baseVersion: item.version, retryTag: nil)
        }
        guard case .conflict? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(server.count("DELETE", file), 1, "not sent again once changed")
    }
}
