import FolioCore
@testable import FolioProviderWebDAV
import FolioTestServers
import Foundation
import SystemPackage
import XCTest

/// Two devices (two providers, each with its own state) replace one file on a real Apache at the same moment, many
/// rounds. Apache checks `If-Match` when a `PUT` starts and writes the body after: two overlapping `PUT`s from one
/// base both pass, and the later one silently replaces the earlier (measured with curl before the fix). Folio holds
/// a write lock on the file while it writes it, so exactly one of the two writes lands and the other is a conflict,
/// never a success its writer's content does not survive (DESIGN.md §2, "Trust"). Creates of one name at once are
/// not locked (README: Apache's lock database loses the locks of new names under load).
final class WebDAVWriteRaceTests: ApacheProviderTestCase {
    /// The rounds of each race.
    static let rounds = Int(ProcessInfo.processInfo.environment["RACE_ROUNDS"] ?? "") ?? 25
    /// The size of each write: big enough that two `PUT` bodies overlap on loopback.
    static let size = 2 << 20

    private var devices: [WebDAVProvider] = []

    override func tearDown() async throws {
        for device in devices { await device.shutdown() }
        devices = []
    }

    /// A device: a provider with its own state folder.
    private func device(_ name: String) throws -> WebDAVProvider {
        let provider = try fixture.provider(device: name)
        devices.append(provider)
        return provider
    }

    /// A file of `size` bytes of `byte`, to upload.
    private func content(_ byte: UInt8, size: Int = WebDAVWriteRaceTests.size) throws -> FilePath {
        let file = state.appendingPathComponent("content-\(UUID().uuidString)")
        try Data(repeating: byte, count: size).write(to: file)
        return FilePath(file.path)
    }

    private func template(_ name: String, writer: String) -> RemoteItemTemplate {
        RemoteItemTemplate(
            id: .generate(), container: .drive, parentID: nil, name: name, kind: .file, modificationTime: .now(),
            mode: 0o644, retryTag: "\(writer)@new")
    }

    /// The outcome of one device's write: its answer, or the error that is not `.busy` (a `.busy` write, refused
    /// while the other device's lock was held, is tried again until the lock is gone, as the core's retries do).
    private static func attempt(
        _ body: @Sendable @escaping () async throws -> RemoteItem
    ) async -> Result<RemoteItem, FolioError> {
        let deadline = ContinuousClock.now + .seconds(120)
        while true {
            do {
                return .success(try await body())
            } catch let error as FolioError {
                guard case .busy = error, ContinuousClock.now < deadline else { return .failure(error) }
                try? await Task.sleep(for: .milliseconds(50))
            } catch {
                return .failure(FolioError(error))
            }
        }
    }

    private func serverBytes(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: fixture.driveFile(name)))
    }

    func testTwoDevicesCreatingOneNameAtOnceNeverBothLand() async throws {
        let one = try device("one")
        let two = try device("two")
        _ = try await one.listContainers()
        _ = try await two.listContainers()
        let oneContent = try content(UInt8(ascii: "1"))
        let twoContent = try content(UInt8(ascii: "2"))
        for round in 0..<Self.rounds {
            let name = "new-\(round).txt"
            let (first, second) = (template(name, writer: "one"), template(name, writer: "two"))
            async let madeOne = Self.attempt { try await one.createItem(first, contents: oneContent) }
            async let madeTwo = Self.attempt { try await two.createItem(second, contents: twoContent) }
            let results = await [madeOne, madeTwo]
            let landed = results.compactMap { try? $0.get() }
            XCTAssertEqual(landed.count, 1, "round \(round): \(results)")
            for case .failure(let error) in results {
                guard case .exists = error else { return XCTFail("round \(round): \(error)") }
            }
            if let item = landed.first {
                XCTAssertEqual(
                    try serverBytes(name).first, item.id == first.id ? UInt8(ascii: "1") : UInt8(ascii: "2"),
                    "round \(round): the server holds the bytes of the create that landed")
            }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: fixture.driveFile(""))
        XCTAssertEqual(left.filter { $0.hasPrefix(WebDAVProvider.stagingPrefix) }, [], "no staged file left")
    }

    func testTwoDevicesReplacingOneFileAtOnceNeverBothLand() async throws {
        let here = try device("here")
        let there = try device("there")
        _ = try await here.listContainers()
        _ = try await there.listContainers()
        let hereContent = try content(UInt8(ascii: "h"))
        let thereContent = try content(UInt8(ascii: "t"))
        var conflicts = 0
        for round in 0..<Self.rounds {
            let name = "doc-\(round).txt"
            let made = try await here.createItem(template(name, writer: "here"), contents: try content(0x30, size: 10))
            let seen = try await there.enumerateWholeFolder(nil, in: .drive)
            let other = try XCTUnwrap(seen.first { $0.name == name }, "the other device lists \(name)")
            XCTAssertEqual(other.id, made.id)
            XCTAssertEqual(other.version, made.version)

            async let fromHere = Self.attempt {
                try await here.modifyItem(
                    made.id, in: .drive, baseVersion: made.version,
                    changes: RemoteItemChanges(retryTag: "here@\(made.version)"), contents: hereContent)
            }
            async let fromThere = Self.attempt {
                try await there.modifyItem(
                    other.id, in: .drive, baseVersion: other.version,
                    changes: RemoteItemChanges(retryTag: "there@\(other.version)"), contents: thereContent)
            }
            let outcomes = await [("here", fromHere), ("there", fromThere)]
            let landed = outcomes.filter { if case .success = $0.1 { true } else { false } }
            XCTAssertEqual(landed.count, 1, "round \(round): exactly one write lands: \(outcomes)")
            for (_, outcome) in outcomes {
                if case .failure(let error) = outcome {
                    guard case .conflict = error else { return XCTFail("round \(round): \(error)") }
                    conflicts += 1
                }
            }
            if let winner = landed.first {
                let expected = UInt8(ascii: winner.0 == "here" ? "h" : "t")
                XCTAssertEqual(try serverBytes(name), Data(repeating: expected, count: Self.size),
                    "round \(round): the server holds the landed write, whole")
            }
        }
        XCTAssertEqual(conflicts, Self.rounds)
    }

    /// While another client holds a lock on a name nothing is at (Apache's lock-null resource), listings show no
    /// file there, a create of that name waits (`.busy`), and a `chmod` of a locked file is `.busy` too, never
    /// taken for done; once the lock is gone, both go through.
    func testAnotherWritersLockIsWaitedForAndALockOnANameIsNoFile() async throws {
        let device = try device("here")
        _ = try await device.listContainers()
        let file = try await device.createItem(template("kept.txt", writer: "here"), contents: try content(0x41, size: 3))

        let lockBody = Data("""
            <?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/>\
            </D:lockscope><D:locktype><D:write/></D:locktype><D:owner>another client</D:owner></D:lockinfo>
            """.utf8)
        func lock(_ path: String) throws -> String {
            let reply = try server.request("LOCK", path, headers: ["Timeout: Second-60"], body: lockBody)
            XCTAssertTrue((200..<300).contains(reply.status), "LOCK \(path): \(reply.status)")
            let header = try XCTUnwrap(reply.headers["lock-token"])
            return header.trimmingCharacters(in: CharacterSet(charactersIn: "<> \r\n"))
        }
        let pending = try lock("/dav/com.folio.drive/pending.txt")
        let held = try lock("/dav/com.folio.drive/kept.txt")

        let names = try await device.enumerateWholeFolder(nil, in: .drive).map(\.name)
        XCTAssertEqual(names, ["kept.txt"], "a lock on a name is no file")

        let create = template("pending.txt", writer: "here")
        do {
            _ = try await device.createItem(create, contents: try content(0x42, size: 5))
            XCTFail("a create of a name another client holds locked went through")
        } catch let error as FolioError {
            guard case .busy = error else { return XCTFail("create: \(error)") }
        }
        do {
            _ = try await device.modifyItem(
                file.id, in: .drive, baseVersion: file.version, changes: RemoteItemChanges(mode: 0o600), contents: nil)
            XCTFail("a chmod of a file another client holds locked was taken for done")
        } catch let error as FolioError {
            guard case .busy = error else { return XCTFail("chmod: \(error)") }
        }

        XCTAssertEqual(
            try server.request("UNLOCK", "/dav/com.folio.drive/pending.txt", headers: ["Lock-Token: <\(pending)>"])
                .status, 204)
        XCTAssertEqual(
            try server.request("UNLOCK", "/dav/com.folio.drive/kept.txt", headers: ["Lock-Token: <\(held)>"]).status,
            204)
        let made = try await device.createItem(create, contents: try content(0x42, size: 5))
        XCTAssertEqual(made.size, 5)
        let changed = try await device.modifyItem(
            file.id, in: .drive, baseVersion: file.version, changes: RemoteItemChanges(mode: 0o600), contents: nil)
        XCTAssertEqual(changed.mode, 0o600)
        let listed = try await device.enumerateWholeFolder(nil, in: .drive)
        XCTAssertEqual(listed.map(\.name), ["kept.txt", "pending.txt"])
        XCTAssertEqual(listed.first { $0.name == "kept.txt" }?.mode, 0o600, "the mode is kept on the server")
    }
}

/// A create whose daemon was killed part way: its file is staged under a hidden name with its properties and moved
/// to its name once whole, so what a kill leaves is a staged file (never listed; the retry writes it again, a delete
/// removes it) or the whole item at its name (the retry and the delete find it by its id). A file at the name that
/// is not the item's is never replaced.
final class WebDAVInterruptedCreateTests: ApacheProviderTestCase {
    private func provider() throws -> WebDAVProvider {
        try fixture.provider()
    }

    private func content(_ text: String) throws -> FilePath {
        let file = state.appendingPathComponent("content-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        return FilePath(file.path)
    }

    private func template(_ name: String) -> RemoteItemTemplate {
        RemoteItemTemplate(
            id: .generate(), container: .drive, parentID: nil, name: name, kind: .file,
            modificationTime: .now(), mode: 0o640, retryTag: "device@new")
    }

    /// The first daemon: does what `createItem` does up to its `MOVE` (index entry marked staged, `PUT` of the
    /// staged file, its properties), then the `MOVE` too if `moved`, and stops there.
    private func killedCreate(_ template: RemoteItemTemplate, _ text: String, moved: Bool) async throws {
        let first = try provider()
        _ = try await first.listContainers()
        first.index.record(template.id, .init(
            container: .drive, parent: nil, name: template.name, isFolder: false, staged: true))
        let staging = "/dav/com.folio.drive/" + WebDAVProvider.stagingName(template.id)
        let put = try await first.client.send("PUT", staging, body: .bytes(Data(text.utf8)))
        XCTAssertEqual(put.status, 201)
        let etag = WebDAVProvider.baseVersion(
            try first.properties(of: staging, in: try await first.propfind(staging, depth: 0)), size: 0)
        let kept = try await first.setProperties(
            ["id": template.id.rawValue, "mode": "640", "rev": "r1", "tag": "device@new \(etag) r1"], at: staging)
        XCTAssertTrue(kept)
        if moved {
            let reply = try await first.client.send(
                "MOVE", staging, headers: [
                    ("Destination", first.client.configuration.url("/dav/com.folio.drive/" + template.name)),
                    ("Overwrite", "F"),
                ])
            XCTAssertEqual(reply.status, 201)
        }
        await first.shutdown()
    }

    private var driveNames: [String] {
        get throws {
            try FileManager.default.contentsOfDirectory(atPath: fixture.driveFile("")).filter { $0 != ".DAV" }.sorted()
        }
    }

    func testAStagedFileIsNeverListedAndTheRetryWritesItAgain() async throws {
        let template = template("report.txt")
        try await killedCreate(template, "first draft", moved: false)

        let next = try provider()
        let listed = try await next.enumerateWholeFolder(nil, in: .drive)
        XCTAssertFalse(listed.contains { $0.name.hasPrefix(".folio") }, "\(listed.map(\.name))")
        XCTAssertFalse(listed.contains { $0.name == "report.txt" })
        let made = try await next.createItem(template, contents: try content("second draft, longer"))
        XCTAssertEqual(made.id, template.id)
        XCTAssertEqual(made.size, 20)
        XCTAssertEqual(
            try String(contentsOfFile: fixture.driveFile("report.txt"), encoding: .utf8), "second draft, longer")
        XCTAssertEqual(try driveNames, ["report.txt"], "the staged file was moved in")
        let again = try await next.enumerateWholeFolder(nil, in: .drive)
        XCTAssertEqual(again.first { $0.name == "report.txt" }?.id, template.id)
        XCTAssertEqual(again.first { $0.name == "report.txt" }?.mode, 0o640)
        await next.shutdown()
    }

    func testTheDeleteOfACreateCutShortRemovesWhatItLeft() async throws {
        for moved in [false, true] {
            let template = template(moved ? "moved.txt" : "staged.txt")
            try await killedCreate(template, "draft", moved: moved)
            let next = try provider()
            try await next.deleteItem(template.id, in: .drive, baseVersion: nil, retryTag: "device@new")
            XCTAssertEqual(try driveNames, [], "moved: \(moved)")
            let listed = try await next.enumerateWholeFolder(nil, in: .drive)
            XCTAssertFalse(listed.contains { $0.name == template.name })
            await next.shutdown()
        }
    }

    func testAFileAtTheNameThatIsNotTheItemsIsNeverReplaced() async throws {
        let template = template("report.txt")
        try await killedCreate(template, "first draft", moved: false)
        XCTAssertEqual(
            try server.request("PUT", "/dav/com.folio.drive/report.txt", body: Data("someone else's".utf8)).status,
            201)

        let next = try provider()
        do {
            _ = try await next.createItem(template, contents: try content("second draft"))
            XCTFail("the create replaced a file another client wrote")
        } catch let error as FolioError {
            guard case .exists = error else { return XCTFail("create: \(error)") }
        }
        XCTAssertEqual(
            try String(contentsOfFile: fixture.driveFile("report.txt"), encoding: .utf8), "someone else's")
        XCTAssertEqual(try driveNames, ["report.txt"], "the staged file is removed")
        await next.shutdown()
    }

}

/// A replacement of a file whose `PUT` landed but whose daemon was killed before the properties (revision,
/// writer's tag) were set is the same writer's own write for the next daemon's retry, never a conflict with itself;
/// a file someone else wrote after it still is one.
final class WebDAVInterruptedReplacementTests: ApacheProviderTestCase {
    private func content(_ text: String) throws -> FilePath {
        let file = state.appendingPathComponent("content-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        return FilePath(file.path)
    }

    /// Makes the file, then plays the first daemon of a replacement by `retryTag`: its `PUT` lands and its
    /// pending write is recorded, as `modifyItem` does before it sets the properties, and it stops there.
    private func killedReplacement(retryTag: String) async throws -> RemoteItem {
        let first = try fixture.provider()
        _ = try await first.listContainers()
        let made = try await first.createItem(
            RemoteItemTemplate(
                id: .generate(), container: .drive, parentID: nil, name: "notes.txt", kind: .file,
                modificationTime: .now(), mode: 0o644, retryTag: "device@new"),
            contents: try content("version one"))
        let path = "/dav/com.folio.drive/notes.txt"
        let etag = try XCTUnwrap(WebDAVProvider.strongTag(made.version))
        // Apache's ETag of a file written in the last second is weak and matches no `If-Match`.
        try await Task.sleep(for: .milliseconds(1100))
        let reply = try await first.client.send(
            "PUT", path, headers: [("If-Match", etag)], body: .bytes(Data("version two".utf8)))
        XCTAssertEqual(reply.status, 204)
        let found = try first.properties(of: path, in: try await first.propfind(path, depth: 0))
        var entry = try XCTUnwrap(first.index.entry(made.id))
        entry.pendingWrite = retryTag + " " + WebDAVProvider.baseVersion(found, size: 0)
        first.index.record(made.id, entry)
        await first.shutdown()
        return made
    }

    func testTheNextDaemonTakesUpItsOwnLandedReplacement() async throws {
        let retryTag = "device@base-one"
        let made = try await killedReplacement(retryTag: retryTag)
        let next = try fixture.provider()
        let written = try await next.modifyItem(
            made.id, in: .drive, baseVersion: made.version, changes: RemoteItemChanges(retryTag: retryTag),
            contents: try content("version two, saved again"))
        XCTAssertEqual(written.size, 24)
        XCTAssertEqual(
            try String(contentsOfFile: fixture.driveFile("notes.txt"), encoding: .utf8), "version two, saved again")
        await next.shutdown()
    }

    func testAFileAnotherClientWroteOverTheLandedReplacementIsAConflict() async throws {
        let retryTag = "device@base-one"
        let made = try await killedReplacement(retryTag: retryTag)
        XCTAssertEqual(
            try server.request("PUT", "/dav/com.folio.drive/notes.txt", body: Data("someone else's".utf8)).status,
            204)
        let next = try fixture.provider()
        do {
            _ = try await next.modifyItem(
                made.id, in: .drive, baseVersion: made.version, changes: RemoteItemChanges(retryTag: retryTag),
                contents: try content("version two, saved again"))
            XCTFail("the retry replaced a file another client wrote")
        } catch let error as FolioError {
            guard case .conflict = error else { return XCTFail("modify: \(error)") }
        }
        XCTAssertEqual(try String(contentsOfFile: fixture.driveFile("notes.txt"), encoding: .utf8), "someone else's")
        await next.shutdown()
    }
}

/// A daemon killed while it wrote: its `PUT` may have landed with nothing recorded, and it still holds its lock on
/// the file. The next daemon takes the landed bytes for its own write (same revision, same bytes), and releases the
/// dead daemon's lock instead of waiting for it to time out.
final class WebDAVKilledWriterTests: ApacheProviderTestCase {
    private func content(_ text: String) throws -> FilePath {
        let file = state.appendingPathComponent("content-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        return FilePath(file.path)
    }

    private func makeNotes(_ provider: WebDAVProvider) async throws -> RemoteItem {
        _ = try await provider.listContainers()
        let made = try await provider.createItem(
            RemoteItemTemplate(
                id: .generate(), container: .drive, parentID: nil, name: "notes.txt", kind: .file,
                modificationTime: .now(), mode: 0o644, retryTag: "device@new"),
            contents: try content("version one"))
        // Apache's ETag of a file written in the last second is weak and matches no `If-Match`.
        try await Task.sleep(for: .milliseconds(1100))
        return made
    }

    func testAPutThatLandedUnrecordedIsTheRetrysOwnWhenItHoldsTheSameBytes() async throws {
        let first = try fixture.provider()
        let made = try await makeNotes(first)
        let etag = try XCTUnwrap(WebDAVProvider.strongTag(made.version))
        // The killed daemon's `PUT` landed; its answer never came back, so nothing recorded it.
        let reply = try await first.client.send(
            "PUT", "/dav/com.folio.drive/notes.txt", headers: [("If-Match", etag)],
            body: .bytes(Data("version two".utf8)))
        XCTAssertEqual(reply.status, 204)
        await first.shutdown()

        let next = try fixture.provider()
        let written = try await next.modifyItem(
            made.id, in: .drive, baseVersion: made.version, changes: RemoteItemChanges(retryTag: "device@one"),
            contents: try content("version two"))
        XCTAssertEqual(written.size, 11)
        XCTAssertFalse(written.version.hasPrefix("superseded"), written.version)
        XCTAssertEqual(try String(contentsOfFile: fixture.driveFile("notes.txt"), encoding: .utf8), "version two")

        // Other bytes at the same revision are someone else's write: a conflict, never replaced.
        XCTAssertEqual(
            try server.request("PUT", "/dav/com.folio.drive/notes.txt", body: Data("someone else's".utf8)).status,
            204)
        do {
            _ = try await next.modifyItem(
                made.id, in: .drive, baseVersion: written.version, changes: RemoteItemChanges(retryTag: "device@two"),
                contents: try content("version three"))
            XCTFail("a retry replaced a file another client wrote")
        } catch let error as FolioError {
            guard case .conflict = error else { return XCTFail("modify: \(error)") }
        }
        XCTAssertEqual(try String(contentsOfFile: fixture.driveFile("notes.txt"), encoding: .utf8), "someone else's")
        await next.shutdown()
    }

    /// A replacement whose `PUT` landed while its answer was lost (its record holds the size and digest of what it
    /// sent), then the file deleted here: the delete that follows takes the landed bytes for its writer's own and
    /// deletes the file; other bytes at that revision are someone else's and are kept.
    func testADeleteAfterAPutThatLandedUnansweredDeletesTheWritersOwnBytesOnly() async throws {
        for someoneElse in [false, true] {
            let first = try fixture.provider()
            let made = try await makeNotes(first)
            let etag = try XCTUnwrap(WebDAVProvider.strongTag(made.version))
            var entry = try XCTUnwrap(first.index.entry(made.id))
            entry.pendingWrite = "device@one ~11:" + WebDAVProvider.contentDigest(of: Data("version two".utf8))
            first.index.record(made.id, entry)
            let sent = someoneElse ? "someone's 2" : "version two"
            let reply = try await first.client.send(
                "PUT", "/dav/com.folio.drive/notes.txt", headers: [("If-Match", etag)], body: .bytes(Data(sent.utf8)))
            XCTAssertEqual(reply.status, 204)
            await first.shutdown()

            let next = try fixture.provider()
            do {
                try await next.deleteItem(made.id, in: .drive, baseVersion: made.version, retryTag: "device@one")
                XCTAssertFalse(someoneElse, "a file someone else wrote was deleted")
                XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.driveFile("notes.txt")))
            } catch let error as FolioError {
                guard case .conflict = error, someoneElse else { return XCTFail("delete: \(error)") }
                XCTAssertEqual(
                    try String(contentsOfFile: fixture.driveFile("notes.txt"), encoding: .utf8), "someone's 2")
                XCTAssertEqual(try server.request("DELETE", "/dav/com.folio.drive/notes.txt").status, 204)
            }
            await next.shutdown()
        }
    }

    func testTheNextDaemonReleasesTheLockItsKilledPredecessorHeld() async throws {
        let first = try fixture.provider()
        let made = try await makeNotes(first)
        // What `whileLocked` does before its `PUT`: the lock is taken and recorded; the daemon dies holding it.
        let path = "/dav/com.folio.drive/notes.txt"
        let info = """
            <?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/>\
            </D:lockscope><D:locktype><D:write/></D:locktype><D:owner>device@killed</D:owner></D:lockinfo>
            """
        let lock = try await first.client.send(
            "LOCK", path, headers: [("Timeout", "Second-3600"), ("Depth", "0")], body: .bytes(Data(info.utf8)))
        XCTAssertEqual(lock.status, 200)
        let token = try XCTUnwrap(WebDAVProvider.lockToken(lock.header("lock-token")))
        first.lockBook.took(WebDAVLock(path: path, token: token))
        await first.shutdown()
        XCTAssertEqual(try server.request("PUT", path, body: Data("x".utf8)).status, 423, "the lock holds")

        let next = try fixture.provider()
        let written = try await next.modifyItem(
            made.id, in: .drive, baseVersion: made.version, changes: RemoteItemChanges(retryTag: "device@one"),
            contents: try content("version two"))
        XCTAssertEqual(written.size, 11)
        XCTAssertEqual(try String(contentsOfFile: fixture.driveFile("notes.txt"), encoding: .utf8), "version two")
        XCTAssertTrue(next.lockBook.takeStaleLocks().isEmpty)
        await next.shutdown()
        XCTAssertTrue(try fixture.provider().lockBook.takeStaleLocks().isEmpty, "nothing left for a third run")
    }
}
