import FolioCore
@testable import FolioProviderWebDAV
import FolioTestServers
import Foundation
import SystemPackage
import XCTest

/// A create whose daemon was killed part way: its file is staged under a hidden name with its properties and moved
/// to its name once whole, so what a kill leaves is a staged file (never listed; the retry writes it again, a delete
/// removes it) or the whole item at its name (the retry and the delete find it by its id). A file at the name that
/// is not the item's is never replaced.
final class WebDAVInterruptedCreateTests: ApacheProviderTestCase {
    private func provider() throws -> WebDAVProvider {
        try fixture.provider()
    }

    private func template(_ name: String) -> RemoteItemTemplate {
        RemoteItemTemplate(
            id: .generate(), container: .drive, parentID: nil, name: name, kind: .file,
            modificationTime: .now(), mode: 0o640, retryTag: "device@new")
    }

    /// The first daemon: does what `createItem` does up to its `MOVE` (index entry marked staged, `PUT` of the
    /// staged file, its properties), then the `MOVE` too if `moved` (recorded as sent, as `createItem` does, also
    /// if only `moveSent`), and stops there.
    private func killedCreate(
        _ template: RemoteItemTemplate, _ text: String, moved: Bool, moveSent: Bool = false
    ) async throws {
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
        if moved || moveSent {
            first.index.record(template.id, .init(
                container: .drive, parent: nil, name: template.name, isFolder: false, staged: true, movingIn: true))
        }
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

    /// The crash battery over Apache found this one: the create's `MOVE` landed, the daemon was killed before it
    /// recorded it, and the document was renamed here meanwhile, so the retry came with the new name. It wrote a
    /// second file there and left the first at the old name for good (a file the mount no longer had).
    func testARetryUnderANewNameMovesTheFileTheEarlierAttemptLeftAtTheOldOne() async throws {
        var template = template("before.txt")
        try await killedCreate(template, "first draft", moved: true)
        XCTAssertEqual(try driveNames, ["before.txt"])

        template.name = "after.txt"
        let next = try provider()
        // A poll lists the folder before the retry (the suite's battery found this order): the listing records the
        // file's place as listed, no longer as staged.
        let before = try await next.enumerateWholeFolder(nil, in: .drive)
        XCTAssertEqual(before.map(\.id), [template.id])
        let made = try await next.createItem(template, contents: try content("first draft, renamed"))
        XCTAssertEqual(made.id, template.id)
        XCTAssertEqual(made.name, "after.txt")
        XCTAssertEqual(try driveNames, ["after.txt"], "one file, at the new name")
        XCTAssertEqual(
            try String(contentsOfFile: fixture.driveFile("after.txt"), encoding: .utf8), "first draft, renamed")
        let listed = try await next.enumerateWholeFolder(nil, in: .drive)
        XCTAssertEqual(listed.map(\.id), [template.id])
        try await next.deleteItem(template.id, in: .drive, baseVersion: nil, retryTag: "device@new")
        XCTAssertEqual(try driveNames, [], "and its delete leaves nothing")
        await next.shutdown()
    }

    /// CI's server-kill drill found this one: Apache's `MOVE` renames the file first and moves its dead properties
    /// after, so a server killed between the two leaves the file at its name without its id (and the staged name
    /// gone). A poll listed it (as a file of no known id) before the retry, which then took it for another client's:
    /// "already exists", waiting for the user for good. The retry takes it up as its own, gives it its id again, and
    /// replaces it only if the document changed since.
    func testAFileWhosePropertiesAServerKilledMidMoveLeftBehindIsTakenUpByTheRetryOrItsDelete() async throws {
        for (changedSince, deleteAfter) in [(false, false), (true, false), (false, true)] {
            let template = template("\(changedSince)-\(deleteAfter).txt")
            try await killedCreate(template, "first draft", moved: false, moveSent: true)
            // What the killed server left: the rename made, the properties still under the staged name.
            try FileManager.default.moveItem(
                atPath: fixture.driveFile(WebDAVProvider.stagingName(template.id)),
                toPath: fixture.driveFile(template.name))

            let next = try provider()
            let listed = try await next.enumerateWholeFolder(nil, in: .drive)
            XCTAssertEqual(listed.map(\.name), [template.name])
            XCTAssertNotEqual(listed.first?.id, template.id, "no id on the server (the setting of this test)")
            if deleteAfter {
                try await next.deleteItem(template.id, in: .drive, baseVersion: nil, retryTag: "device@new")
                XCTAssertEqual(try driveNames, [], "the delete of the create takes the file it moved in")
                await next.shutdown()
                continue
            }
            let text = changedSince ? "second draft, longer" : "first draft"
            let made = try await next.createItem(template, contents: try content(text))
            XCTAssertEqual(made.id, template.id)
            XCTAssertEqual(try String(contentsOfFile: fixture.driveFile(template.name), encoding: .utf8), text)
            XCTAssertEqual(try driveNames, [template.name], "one file, nothing hidden")
            let again = try await next.enumerateWholeFolder(nil, in: .drive)
            XCTAssertEqual(again.map(\.id), [template.id], "the file carries its id again")
            XCTAssertEqual(again.first?.mode, 0o640)
            try await next.deleteItem(template.id, in: .drive, baseVersion: nil, retryTag: "device@new")
            XCTAssertEqual(try driveNames, [])
            await next.shutdown()
        }
    }

    /// The crash battery over Apache found a folder's create killed between its `MKCOL` and its properties: a
    /// folder at the name without the id, which the retry took for another device's ("already exists", waiting for
    /// the user for good). A folder is staged as a file is; killed after each of its steps, the retry ends with one
    /// folder at the name, with the id, and nothing hidden left; the delete of one cut short leaves nothing.
    func testAFolderCreateCutShortAtAnyStepIsTakenUpByTheRetryOrItsDelete() async throws {
        for (step, deleteAfter) in [("mkcol", false), ("properties", false), ("move", false), ("mkcol", true),
                                    ("move", true)] {
            let name = "folder-\(step)-\(deleteAfter)"
            let folder = RemoteItemTemplate(
                id: .generate(), container: .drive, parentID: nil, name: name, kind: .directory,
                modificationTime: .now(), mode: 0o750, retryTag: "device@new")
            let first = try provider()
            _ = try await first.listContainers()
            first.index.record(folder.id, .init(container: .drive, parent: nil, name: name, isFolder: true, staged: true))
            let staging = "/dav/com.folio.drive/" + WebDAVProvider.stagingName(folder.id) + "/"
            let made = try await first.client.send("MKCOL", staging)
            XCTAssertEqual(made.status, 201)
            if step != "mkcol" {
                let kept = try await first.setProperties(["id": folder.id.rawValue, "mode": "750"], at: staging)
                XCTAssertTrue(kept)
            }
            if step == "move" {
                let moved = try await first.client.send("MOVE", staging, headers: [
                    ("Destination", first.client.configuration.url("/dav/com.folio.drive/\(name)/")),
                    ("Overwrite", "F"),
                ])
                XCTAssertEqual(moved.status, 201)
            }
            await first.shutdown()

            let next = try provider()
            if deleteAfter {
                try await next.deleteItem(folder.id, in: .drive, baseVersion: nil, retryTag: "device@new")
                XCTAssertEqual(try driveNames, [], "\(step): nothing left")
            } else {
                let made = try await next.createItem(folder, contents: nil)
                XCTAssertEqual(made.id, folder.id, step)
                XCTAssertEqual(try driveNames, [name], "\(step): one folder, nothing hidden")
                let listed = try await next.enumerateWholeFolder(nil, in: .drive)
                XCTAssertEqual(listed.map(\.id), [folder.id], step)
                XCTAssertEqual(listed.first?.mode, 0o750, step)
                try await next.deleteItem(folder.id, in: .drive, baseVersion: nil, retryTag: "device@new")
            }
            await next.shutdown()
        }
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

    /// A file of no id at the name of a create that never sent its `MOVE` (its `PUT` never ran: the server was
    /// away) is another client's, even when a listing saw it first and nothing is at the staged name.
    func testAFileOfNoIDAtTheNameOfACreateThatSentNoMoveIsNeverTaken() async throws {
        let template = template("report.txt")
        let first = try provider()
        _ = try await first.listContainers()
        first.index.record(template.id, .init(
            container: .drive, parent: nil, name: template.name, isFolder: false, staged: true))
        await first.shutdown()
        XCTAssertEqual(
            try server.request("PUT", "/dav/com.folio.drive/report.txt", body: Data("someone else's".utf8)).status,
            201)

        let next = try provider()
        _ = try await next.enumerateWholeFolder(nil, in: .drive)
        do {
            _ = try await next.createItem(template, contents: try content("mine"))
            XCTFail("the create took a file another client wrote")
        } catch let error as FolioError {
            guard case .exists = error else { return XCTFail("create: \(error)") }
        }
        try await next.deleteItem(template.id, in: .drive, baseVersion: nil, retryTag: "device@new")
        XCTAssertEqual(
            try String(contentsOfFile: fixture.driveFile("report.txt"), encoding: .utf8), "someone else's")
        await next.shutdown()
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
