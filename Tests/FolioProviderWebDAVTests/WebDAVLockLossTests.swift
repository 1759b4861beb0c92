import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import SystemPackage
import XCTest

/// Issue 16 over WebDAV, faults of a write's lock (``WebDAVLock``) and of its properties seen from one device,
/// scripted: what a real Apache does now and then when two devices write one file at once (``WebDAVWriteRaceTests``
/// races them for real).
/// - Apache can grant one exclusive lock to two `LOCK`s that arrive together and keep only the other device's: this
///   device's `PROPPATCH` under it is refused with `412`. A tag update refused so was taken for done, and the tag
///   was lost everywhere. It is `.busy` (tried again), never done; a content write whose `PUT` landed before the
///   refusal is recognised as its own when sent again.
/// - A `412` under a lock the server still names is not that race: it needs the user, never retried forever.
/// - A refusal inside the `207` (one property refused, the rest `424`) is never done either.
/// - Another device's `PUT` can land while this device waits for the lock, or between its look and its write: the
///   answer of a change without content says that the file changed elsewhere, so the device never takes the
///   content it holds for the other writer's version.
final class WebDAVLockLossTests: XCTestCase {
    private var fixture: FaultFixture!

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws { await fixture?.stop() }

    private let drive = FaultFixture.drive
    private var file: String { drive + "a.txt" }
    private static let token = "opaquelocktoken:lost-1"

    /// Scripts a locking server whose Drive holds `a.txt` (the ETag `"2"` once a request `changedAfter` (a method)
    /// of it came, or a `PUT`; `"1"` before), with its `LOCK`, `UNLOCK`, `PUT` and `PROPPATCH` (`proppatch`).
    private func lockingServer(
        changedAfter: String? = nil, proppatch: [MisbehavingServer.Reply]
    ) async throws -> (WebDAVProvider, RemoteItem) {
        let server = fixture.server
        let file = file
        server.on("OPTIONS", FaultFixture.base, .answer(200, headers: [("DAV", "1, 2")]))
        server.on("PROPFIND", drive, .answer(207, body: MultistatusBody.listing(
            drive, [MultistatusBody.response(file, etag: "\"1\"", length: 1)])))
        server.on("PROPFIND", file) { _ in
            let changed = server.count("PUT", file) > 0 || changedAfter.map { server.count($0, file) > 0 } ?? false
            let etag = changed ? "\"2\"" : "\"1\""
            return .answer(207, body: MultistatusBody.document([MultistatusBody.response(file, etag: etag, length: 1)]))
        }
        server.on("LOCK", file, .answer(
            200, headers: [("Lock-Token", "<\(Self.token)>")], body: Data("<D:prop xmlns:D=\"DAV:\"/>".utf8)))
        server.on("UNLOCK", file, .answer(204))
        server.on("PUT", file, .answer(204, headers: [("ETag", "\"2\"")]))
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

    func testAPropertyWriteRefusedUnderALockTheServerStillNamesNeedsTheUser() async throws {
        let (provider, item) = try await lockingServer(proppatch: [.answer(412)])
        let server = fixture.server
        let file = file
        let plain = MultistatusBody.document([MultistatusBody.response(file, etag: "\"1\"", length: 1)])
        let locked = MultistatusBody.document([
            "<D:response><D:href>\(file)</D:href><D:propstat><D:prop><D:lockdiscovery><D:activelock>"
                + "<D:locktype><D:write/></D:locktype><D:lockscope><D:exclusive/></D:lockscope><D:depth>0</D:depth>"
                + "<D:owner>here</D:owner><D:locktoken><D:href>\(Self.token)</D:href></D:locktoken></D:activelock>"
                + "</D:lockdiscovery></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
        ])
        server.on("PROPFIND", file) { request in
            .answer(207, body: String(decoding: request.body, as: UTF8.self).contains("lockdiscovery") ? locked : plain)
        }
        let update = RemoteItemChanges(retryTag: "here@\(item.version)", tags: TagUpdate(base: [], tags: ["red"]))
        let error = await folioError {
            try await provider.modifyItem(item.id, in: .drive, baseVersion: item.version, changes: update, contents: nil)
        }
        // (Busy would be retried forever: the lock this device holds is the one the server names.)
        guard case .providerFailure(let message, retryable: false)? = error else {
            return XCTFail("\(String(describing: error))")
        }
        XCTAssertTrue(message.contains("412") && message.contains("needs you"), message)
        XCTAssertEqual(fixture.server.count("UNLOCK", file), 1)
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

    func testAChangeWithoutContentAnswersThatAnotherWriterChangedTheFileWhileItWaited() async throws {
        // Tags take the file's lock: the other writer's `PUT` lands while this change waits for it.
        let (tagging, file) = try await lockingServer(changedAfter: "LOCK", proppatch: [Self.propertiesSet])
        let tagged = try await tagging.modifyItem(
            file.id, in: .drive, baseVersion: file.version,
            changes: RemoteItemChanges(retryTag: "here@\(file.version)", tags: TagUpdate(base: [], tags: ["red"])),
            contents: nil)
        XCTAssertNotEqual(tagged.version, file.version)
        XCTAssertTrue(tagged.changedElsewhere, "another writer's version passed off as the base's (tags)")
        await fixture.stop()

        // A mode takes no lock: the other writer's `PUT` lands between the look and the `PROPPATCH`.
        fixture = try FaultFixture()
        let (changing, same) = try await lockingServer(changedAfter: "PROPPATCH", proppatch: [Self.propertiesSet])
        let changed = try await changing.modifyItem(
            same.id, in: .drive, baseVersion: same.version,
            changes: RemoteItemChanges(mode: 0o600, retryTag: "here@\(same.version)"), contents: nil)
        XCTAssertNotEqual(changed.version, same.version)
        XCTAssertTrue(changed.changedElsewhere, "another writer's version passed off as the base's (mode)")
    }

    func testAContentWriteWhosePropertiesAreRefusedUnderALostLockIsItsOwnWhenSentAgain() async throws {
        let (provider, item) = try await lockingServer(proppatch: [.answer(412), Self.propertiesSet])
        let content = fixture.state.appendingPathComponent("content")
        try Data("later".utf8).write(to: content)
        let changes = RemoteItemChanges(retryTag: "here@\(item.version)")

        let error = await folioError {
            try await provider.modifyItem(
                item.id, in: .drive, baseVersion: item.version, changes: changes, contents: FilePath(content.path))
        }
        guard case .busy? = error else { return XCTFail("taken for done: \(String(describing: error))") }

        // Its `PUT` landed: sent again, on the version it made, never taken for another writer's (a conflict).
        let written = try await provider.modifyItem(
            item.id, in: .drive, baseVersion: item.version, changes: changes, contents: FilePath(content.path))
        XCTAssertFalse(written.changedElsewhere)
        let puts = fixture.server.requests("PUT", file)
        XCTAssertEqual(puts.map { $0.header("If-Match") }, ["\"1\"", "\"2\""])
        XCTAssertEqual(fixture.server.count("PROPPATCH", file), 2)
    }

    func testARefusalInsideTheMultistatusIsNeverDone() async throws {
        let refused = { (status: String) in
            MisbehavingServer.Reply.answer(207, body: MultistatusBody.document([
                "<D:response><D:href>/dav/com.folio.drive/a.txt</D:href>"
                    + "<D:propstat><D:prop><F:tags xmlns:F=\"x\"/></D:prop><D:status>HTTP/1.1 \(status)</D:status>"
                    + "</D:propstat><D:propstat><D:prop><F:id xmlns:F=\"x\"/></D:prop>"
                    + "<D:status>HTTP/1.1 424 Failed Dependency</D:status></D:propstat></D:response>"
            ]))
        }
        let (provider, item) = try await lockingServer(
            proppatch: [refused("507 Insufficient Storage"), refused("500 Internal Server Error"), refused("403 Forbidden")])
        let update = RemoteItemChanges(retryTag: "here@\(item.version)", tags: TagUpdate(base: [], tags: ["red"]))
        var errors: [FolioError?] = []
        for _ in 0..<3 {
            errors.append(await folioError {
                try await provider.modifyItem(item.id, in: .drive, baseVersion: item.version, changes: update, contents: nil)
            })
        }
        guard case .noSpace? = errors[0], case .providerFailure(_, retryable: true)? = errors[1],
            case .providerFailure(let message, retryable: false)? = errors[2]
        else { return XCTFail("\(errors)") }
        XCTAssertTrue(message.contains("needs you"), message)
        XCTAssertEqual(WebDAVProvider.propertyRefusal(in: Data("<s>HTTP/1.1 200 OK</s><s>HTTP/1.1 424 x</s>".utf8)), 424)
        XCTAssertNil(WebDAVProvider.propertyRefusal(in: Data("<s>HTTP/1.1 200 OK</s>".utf8)))
    }
}
