import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import SystemPackage
import XCTest

/// Issue 16 over WebDAV, faults of a file's write lock (``WebDAVLock``) seen from one device, scripted: what a real
/// Apache does now and then when two devices write one file at once (``WebDAVWriteRaceTests`` races them for real).
/// - Apache can grant one exclusive lock to two `LOCK`s that arrive together and keep only the other device's: this
///   device's `PROPPATCH` under it is refused with `412`. A tag update refused so was taken for done, and the tag
///   was lost everywhere. It is `.busy` (tried again), never done.
/// - Another device's `PUT` can land while this device waits for the lock, after its look found the base version:
///   the answer of a change without content says that the file changed elsewhere, so the device never takes the
///   content it holds for the other writer's version.
final class WebDAVLockLossTests: XCTestCase {
    private var fixture: FaultFixture!

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws { await fixture?.stop() }

    private let drive = FaultFixture.drive
    private var file: String { drive + "a.txt" }
    private static let token = "opaquelocktoken:lost-1"

    /// Scripts a locking server whose Drive holds `a.txt` (the ETag `"2"` once a `LOCK` of it came if
    /// `changedWhileLocking`, `"1"` before), with its `LOCK`, `UNLOCK` and `PROPPATCH` (`proppatch`).
    private func lockingServer(
        changedWhileLocking: Bool = false, proppatch: [MisbehavingServer.Reply]
    ) async throws -> (WebDAVProvider, RemoteItem) {
        let server = fixture.server
        let file = file
        server.on("OPTIONS", FaultFixture.base, .answer(200, headers: [("DAV", "1, 2")]))
        server.on("PROPFIND", drive, .answer(207, body: MultistatusBody.listing(
            drive, [MultistatusBody.response(file, etag: "\"1\"", length: 1)])))
        server.on("PROPFIND", file) { _ in
            let etag = changedWhileLocking && server.count("LOCK", file) > 0 ? "\"2\"" : "\"1\""
            return .answer(207, body: MultistatusBody.document([MultistatusBody.response(file, etag: etag, length: 1)]))
        }
        server.on("LOCK", file, .answer(
            200, headers: [("Lock-Token", "<\(Self.token)>")], body: Data("<D:prop xmlns:D=\"DAV:\"/>".utf8)))
        server.on("UNLOCK", file, .answer(204))
        server.on("PROPPATCH", file) { _ in
            // (This request is already counted.)
            proppatch[min(server.count("PROPPATCH", file), proppatch.count) - 1]
        }
        let provider = try fixture.provider()
        let listed = try await fixture.listDrive(provider)
        return (provider, try XCTUnwrap(listed.first))
    }

    private static let propertiesSet = MisbehavingServer.Reply.answer(207, body: MultistatusBody.document([
        "<D:response><D:href>/dav/com.folio.drive/a.txt</D:href><D:propstat><D:prop/>"
            + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    ]))

    func testATagUpdateRefusedUnderALockTheServerLostIsBusyAndLandsWhenSentAgain() async throws {
        let (provider, item) = try await lockingServer(proppatch: [.answer(412), Self.propertiesSet])
        let update = RemoteItemChanges(retryTag: "here@\(item.version)", tags: TagUpdate(base: [], tags: ["red"]))

        let error = await folioError {
            try await provider.modifyItem(item.id, in: .drive, baseVersion: item.version, changes: update, contents: nil)
        }
        guard case .busy(let message)? = error else { return XCTFail("taken for done: \(String(describing: error))") }
        XCTAssertTrue(message.contains("412"), message)
        XCTAssertEqual(fixture.server.count("UNLOCK", file), 1, "its lock is released all the same")

        _ = try await provider.modifyItem(item.id, in: .drive, baseVersion: item.version, changes: update, contents: nil)
        let sent = fixture.server.requests("PROPPATCH", file)
        XCTAssertEqual(sent.count, 2)
        XCTAssertTrue(sent.allSatisfy { $0.header("If") == "(<\(Self.token)>)" }, "both under the lock")
        XCTAssertTrue(sent.allSatisfy { String(decoding: $0.body, as: UTF8.self).contains("red") })
    }

    func testAServerThatFailsAPropertyWriteIsAnErrorNeverDone() async throws {
        let (provider, item) = try await lockingServer(proppatch: [.answer(500), .answer(403)])
        let update = RemoteItemChanges(retryTag: "here@\(item.version)", tags: TagUpdate(base: [], tags: ["red"]))
        let failing = await folioError {
            try await provider.modifyItem(item.id, in: .drive, baseVersion: item.version, changes: update, contents: nil)
        }
        guard case .providerFailure(_, retryable: true)? = failing else {
            return XCTFail("a failing server: \(String(describing: failing))")
        }
        let refused = await folioError {
            try await provider.modifyItem(item.id, in: .drive, baseVersion: item.version, changes: update, contents: nil)
        }
        guard case .providerFailure(let message, retryable: false)? = refused else {
            return XCTFail("a refusal of the tags: \(String(describing: refused))")
        }
        XCTAssertTrue(message.contains("needs you"), message)
    }

    func testAChangeWithoutContentAnswersThatAnotherWriterChangedTheFileWhileItWaitedForTheLock() async throws {
        let (provider, item) = try await lockingServer(changedWhileLocking: true, proppatch: [Self.propertiesSet])
        for changes in [
            RemoteItemChanges(retryTag: "here@\(item.version)", tags: TagUpdate(base: [], tags: ["red"])),
            RemoteItemChanges(mode: 0o600, retryTag: "here@\(item.version)"),
        ] {
            let answer = try await provider.modifyItem(
                item.id, in: .drive, baseVersion: item.version, changes: changes, contents: nil)
            XCTAssertNotEqual(answer.version, item.version)
            XCTAssertTrue(answer.changedElsewhere, "another writer's version passed off as the base's: \(changes)")
        }
    }
}
