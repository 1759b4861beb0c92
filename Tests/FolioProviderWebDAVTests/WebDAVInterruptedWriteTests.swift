import FolioCore
@testable import FolioProviderWebDAV
import FolioTestServers
import Foundation
import SystemPackage
import XCTest

/// A replacement of a file whose `PUT` landed but whose daemon was killed before the properties (revision,
/// writer's tag) were set is the same writer's own write for the next daemon's retry, never a conflict with itself;
/// a file someone else wrote after it still is one.
final class WebDAVInterruptedReplacementTests: ApacheProviderTestCase {
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

    /// The crash battery over Apache found this one: a poll listed the folder between the cut-short replacement and
    /// its retry, and the listing's record of the file dropped the pending write, so the retry (with newer content)
    /// took its own landed bytes for another writer's: a conflict with itself, and the newer content never uploaded.
    func testAListingBetweenTheLandedReplacementAndItsRetryKeepsThePendingWrite() async throws {
        let retryTag = "device@base-one"
        let made = try await killedReplacement(retryTag: retryTag)
        let next = try fixture.provider()
        _ = try await next.listContainers()
        let listed = try await next.enumerateFolder(nil, in: .drive, from: nil, pageSize: 100).items
        XCTAssertEqual(listed.map(\.name), ["notes.txt"])
        XCTAssertNotNil(next.index.entry(made.id)?.pendingWrite, "the listing keeps what the write recorded")
        let written = try await next.modifyItem(
            made.id, in: .drive, baseVersion: made.version, changes: RemoteItemChanges(retryTag: retryTag),
            contents: try content("version three, newer"))
        XCTAssertEqual(written.size, 20)
        XCTAssertEqual(
            try String(contentsOfFile: fixture.driveFile("notes.txt"), encoding: .utf8), "version three, newer")
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

    /// What a daemon killed during a rename of `made` to `renamed.txt` leaves: the move recorded as under way, and
    /// the `MOVE` landed on the server.
    private func renameUnanswered(_ provider: WebDAVProvider, _ made: RemoteItem) async throws {
        var entry = try XCTUnwrap(provider.index.entry(made.id))
        entry.movingTo = .init(container: .drive, parent: nil, name: "renamed.txt")
        provider.index.record(made.id, entry)
        let reply = try await provider.client.send(
            "MOVE", "/dav/com.folio.drive/notes.txt", headers: [
                ("Destination", provider.client.configuration.url("/dav/com.folio.drive/renamed.txt")),
                ("Overwrite", "F"),
            ])
        XCTAssertEqual(reply.status, 201)
    }

    /// `LOCK`s `path` through `provider`'s client for an hour, as another writer (`owner`) would: returns its token.
    private func lockByHand(_ provider: WebDAVProvider, _ path: String, owner: String) async throws -> String {
        let lock = try await provider.client.send(
            "LOCK", path, headers: [("Timeout", "Second-3600"), ("Depth", "0")], body: .bytes(Data("""
                <?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/>\
                </D:lockscope><D:locktype><D:write/></D:locktype><D:owner>\(owner)</D:owner></D:lockinfo>
                """.utf8)))
        XCTAssertEqual(lock.status, 200)
        return try XCTUnwrap(WebDAVProvider.lockToken(lock.header("lock-token")))
    }

    /// The next daemon replaces `made` (which a killed daemon's lock held) and leaves no lock for a third run.
    private func assertTheNextDaemonWrites(_ made: RemoteItem) async throws {
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

    /// A rename whose `MOVE` landed while its answer was lost: the retry of the rename and a delete that follows
    /// find the item at its new name (it carries its id), never take it for gone at the old one.
    func testARenameThatLandedUnansweredIsFoundByTheRetryAndTheDelete() async throws {
        for deleteAfter in [false, true] {
            let first = try fixture.provider()
            let made = try await makeNotes(first)
            try await renameUnanswered(first, made)
            await first.shutdown()

            let next = try fixture.provider()
            if deleteAfter {
                try await next.deleteItem(made.id, in: .drive, baseVersion: made.version, retryTag: "device@new")
                XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.driveFile("renamed.txt")))
            } else {
                let renamed = try await next.modifyItem(
                    made.id, in: .drive, baseVersion: made.version, changes: RemoteItemChanges(name: "renamed.txt"),
                    contents: nil)
                XCTAssertEqual(renamed.name, "renamed.txt")
                XCTAssertEqual(renamed.id, made.id)
                XCTAssertEqual(try server.request("DELETE", "/dav/com.folio.drive/renamed.txt").status, 204)
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.driveFile("notes.txt")))
            await next.shutdown()
        }
    }

    /// A read of `id` through `provider` finds it at `renamed.txt`, holding "version one".
    private func assertReadsAsRenamed(_ provider: WebDAVProvider, _ id: ItemID, version: String) async throws {
        let destination = fixture.state.appendingPathComponent("read")
        let read = try await provider.fetchContents(
            of: id, in: .drive, version: version, range: 0..<11, to: FilePath(destination.path), progress: { _ in })
        XCTAssertEqual(read.name, "renamed.txt")
        XCTAssertEqual(try String(contentsOf: destination, encoding: .utf8), "version one")
    }

    /// Apache's `MOVE` renames first and moves the dead properties after: a server killed between the two leaves
    /// the file at its new name without its id, and nothing at the old one. The retry of the rename, a read and a
    /// listing find the item there, and it carries its id again.
    func testARenameWhosePropertiesAServerKilledMidMoveLeftBehindIsFoundByTheRetry() async throws {
        let first = try fixture.provider()
        let made = try await makeNotes(first)
        var entry = try XCTUnwrap(first.index.entry(made.id))
        entry.movingTo = .init(container: .drive, parent: nil, name: "renamed.txt")
        first.index.record(made.id, entry)
        await first.shutdown()
        try FileManager.default.moveItem(
            atPath: fixture.driveFile("notes.txt"), toPath: fixture.driveFile("renamed.txt"))

        let next = try fixture.provider()
        let renamed = try await next.modifyItem(
            made.id, in: .drive, baseVersion: made.version, changes: RemoteItemChanges(name: "renamed.txt"),
            contents: nil)
        XCTAssertEqual(renamed.name, "renamed.txt")
        XCTAssertEqual(renamed.id, made.id)
        let listed = try await next.enumerateWholeFolder(nil, in: .drive)
        XCTAssertEqual(listed.map(\.id), [made.id], "the file carries its id again")
        try await assertReadsAsRenamed(next, made.id, version: renamed.version)
        await next.shutdown()
    }

    /// The crash battery over Apache found this one: after such a rename, a read of the file (a placeholder)
    /// asked for it at the name it moved from, which the working set's listing still had (404: `EIO`).
    func testARenameThatLandedUnansweredIsFoundByARead() async throws {
        let first = try fixture.provider()
        let made = try await makeNotes(first)
        let listed = try await first.enumerateFolder(nil, in: .drive, from: nil, pageSize: 100).items
        XCTAssertEqual(listed.first { $0.id == made.id }?.version, made.version, "in the working set at its name")
        try await renameUnanswered(first, made)
        await first.shutdown()

        let next = try fixture.provider()
        try await assertReadsAsRenamed(next, made.id, version: made.version)
        await next.shutdown()
    }

    func testTheNextDaemonReleasesTheLockItsKilledPredecessorHeld() async throws {
        let first = try fixture.provider()
        let made = try await makeNotes(first)
        // What `whileLocked` does before its `PUT`: the lock is taken and recorded; the daemon dies holding it.
        let path = "/dav/com.folio.drive/notes.txt"
        let token = try await lockByHand(first, path, owner: "device@killed")
        first.lockBook.took(WebDAVLock(path: path, token: token))
        await first.shutdown()
        XCTAssertEqual(try server.request("PUT", path, body: Data("x".utf8)).status, 423, "the lock holds")
        try await assertTheNextDaemonWrites(made)
    }

    /// The daemon is killed after its `LOCK` was sent and granted, before the answer (and its token) came: only
    /// the asking is recorded, with the lock's unique owner. The next daemon finds the lock by that owner in the
    /// file's `lockdiscovery` and releases it; another owner's lock on the file is left alone.
    func testTheNextDaemonReleasesALockGrantedToItsPredecessorUnanswered() async throws {
        let first = try fixture.provider()
        let made = try await makeNotes(first)
        let path = "/dav/com.folio.drive/notes.txt"
        let owner = "device@killed 1a2b3c4d"
        first.lockBook.took(WebDAVLockBook.asked(path, owner: owner))  // recorded before the `LOCK` is sent
        _ = try await lockByHand(first, path, owner: owner)
        await first.shutdown()  // the answer, and the token, never recorded
        XCTAssertEqual(try server.request("PUT", path, body: Data("x".utf8)).status, 423, "the lock holds")
        try await assertTheNextDaemonWrites(made)
    }

    /// An unanswered `LOCK` recorded for an owner that holds no lock (the server never granted it): the record goes,
    /// and another device's lock on the file is not released.
    func testAnUnansweredLockReleasesNoOtherOwnersLock() async throws {
        let first = try fixture.provider()
        _ = try await makeNotes(first)
        let path = "/dav/com.folio.drive/notes.txt"
        first.lockBook.took(WebDAVLockBook.asked(path, owner: "device@killed 00000000"))
        let token = try await lockByHand(first, path, owner: "device@other 00000000")
        await first.shutdown()

        let next = try fixture.provider()
        await next.releaseStaleLocksFirst()
        XCTAssertFalse(next.lockBook.hasStaleLocks, "the record is gone")
        XCTAssertEqual(try server.request("PUT", path, body: Data("x".utf8)).status, 423, "the other lock holds")
        let unlock = try await next.client.send("UNLOCK", path, headers: [("Lock-Token", "<\(token)>")])
        XCTAssertEqual(unlock.status, 204, "still there to release")
        await next.shutdown()
    }

    /// A delete (no lock of its own) is the first change after the restart: the dead daemon's lock is released
    /// before it too, or Apache refuses it.
    func testADeleteAfterARestartIsNotRefusedByTheKilledDaemonsLock() async throws {
        let first = try fixture.provider()
        let made = try await makeNotes(first)
        let path = "/dav/com.folio.drive/notes.txt"
        let token = try await lockByHand(first, path, owner: "device@killed")
        first.lockBook.took(WebDAVLock(path: path, token: token))
        await first.shutdown()

        let next = try fixture.provider()
        try await next.deleteItem(made.id, in: .drive, baseVersion: made.version, retryTag: "device@new")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.driveFile("notes.txt")))
        await next.shutdown()
    }
}
