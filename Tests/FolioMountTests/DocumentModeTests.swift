import FolioCore
import Foundation
import XCTest

/// The document picker's import, export and move modes (issue 16, "The four modes"; open is `folio grant`,
/// tested in ViewTests and BookmarkTests), each with its result checked on a second device.
class DocumentModeTests: MountTestCase {
    private let notes = "com.example.notes"

    override func prepareRemote() throws {
        try fixture.addContainer(Container(id: ContainerID(notes), displayName: "Notes", isPublic: true))
        try fixture.addContainer(Container(id: ContainerID("com.example.secret"), displayName: "Secret", isPublic: false))
        try FileManager.default.createDirectory(atPath: fixture.remotePath("Docs"), withIntermediateDirectories: true)
        try Data("shared draft".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Docs/report.txt")))
        try FileManager.default.createDirectory(
            atPath: fixture.remotePath("Inbox", container: notes), withIntermediateDirectories: true)
        fixture.handRemoteToServer()
    }

    private func secondDevice() throws -> MountFixture {
        let other = try MountFixture(remote: fixture.remote)
        addTeardownBlock { other.tearDown() }
        try other.start()
        return other
    }

    private func attach(_ app: String, _ device: MountFixture) throws -> String {
        let view = device.root + "/view-\(app)"
        try FileManager.default.createDirectory(atPath: view, withIntermediateDirectories: true)
        addTeardownBlock { Shell.run("fusermount3 -u -z '\(view)' 2>/dev/null; true") }
        let result = device.folio("mount --app \(app) --of '\(device.mountpoint)' '\(view)'")
        XCTAssertEqual(result.status, 0, result.stderr)
        return view
    }

    func testImportCopiesADocumentIntoAnAppsContainerAsANewDocument() throws {
        let outside = fixture.root + "/letter.txt"
        Shell.check("""
            printf 'dear app' > '\(outside)' && chmod 640 '\(outside)' && touch -d '2020-01-02 03:04:05' '\(outside)' \
            && setfattr -n user.xdg.tags -v 'work,red' '\(outside)'
            """)
        let imported = fixture.folio("import '\(outside)' --app com.example.secret --mount '\(fixture.mountpoint)'")
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.stdout.contains("imported"), imported.stdout)
        // From the mount itself, under another name: a placeholder read for the copy, left as it was.
        let source = fixture.path("Docs/report.txt")
        let fromMount = fixture.folio("import '\(source)' --app com.example.secret --as copy.txt")
        XCTAssertEqual(fromMount.status, 0, fromMount.stderr)
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("letter.txt", container: "com.example.secret"), "dear app")
        XCTAssertEqual(fixture.remoteText("copy.txt", container: "com.example.secret"), "shared draft")
        XCTAssertEqual(fixture.remoteText("Docs/report.txt"), "shared draft", "the source stays")

        let view = try attach("com.example.secret", fixture)
        XCTAssertEqual(Shell.check("stat -c '%a %Y' '\(view)/letter.txt'"), "640 1577934245\n", "mode and time")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.xdg.tags '\(view)/letter.txt'"), "work,red")
        XCTAssertNotEqual(
            Shell.check("getfattr --only-values -n user.folio.id '\(view)/copy.txt'"),
            Shell.check("getfattr --only-values -n user.folio.id '\(source)'"), "a new document, not a reference")
        XCTAssertEqual(Shell.check("stat -c %h '\(source)'"), "1\n")

        // A second device has both in the app's container.
        let other = try secondDevice()
        let otherView = try attach("com.example.secret", other)
        XCTAssertEqual(Shell.check("cat '\(otherView)/letter.txt' '\(otherView)/copy.txt'"), "dear appshared draft")

        // Refused, with nothing changed: a name the container has, a folder, a missing file, an app view's socket.
        let taken = fixture.folio("import '\(outside)' --app com.example.secret --mount '\(fixture.mountpoint)'")
        XCTAssertNotEqual(taken.status, 0)
        XCTAssertTrue(taken.stderr.contains("letter.txt"), taken.stderr)
        let folder = fixture.folio("import '\(fixture.root)' --app com.example.secret --mount '\(fixture.mountpoint)'")
        XCTAssertTrue(folder.stderr.contains("only documents"), folder.stderr)
        let missing = fixture.folio("import '\(fixture.root)/nope.txt' --app com.example.secret --mount '\(fixture.mountpoint)'")
        XCTAssertTrue(missing.stderr.contains("nope.txt"), missing.stderr)
        let confined = fixture.folio("import '\(outside)' --app com.example.secret --as x.txt --mount '\(view)'")
        XCTAssertTrue(confined.stderr.contains("not available through the app view"), confined.stderr)
        XCTAssertEqual(Shell.check("ls '\(view)'"), "copy.txt\nletter.txt\n")
        XCTAssertEqual(Shell.check("cat '\(view)/letter.txt'"), "dear app")
    }

    func testExportCopiesOutWithTagsToAnotherContainerOrAPlainFolder() throws {
        let document = fixture.path("Docs/report.txt")
        Shell.check("setfattr -n user.xdg.tags -v 'draft' '\(document)' && touch -d '2021-05-06 07:08:09' '\(document)'")
        let exported = fixture.folio("export '\(document)' '\(fixture.path("Notes/Inbox"))'")
        XCTAssertEqual(exported.status, 0, exported.stderr)
        let copy = fixture.path("Notes/Inbox/report.txt")
        XCTAssertEqual(Shell.check("cat '\(copy)'"), "shared draft")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.xdg.tags '\(copy)'"), "draft")
        XCTAssertEqual(Shell.check("stat -c %Y '\(copy)'"), "1620284889\n")
        XCTAssertNotEqual(
            Shell.check("getfattr --only-values -n user.folio.id '\(copy)'"),
            Shell.check("getfattr --only-values -n user.folio.id '\(document)'"))
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("Inbox/report.txt", container: notes), "shared draft")
        let other = try secondDevice()
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            (try? String(contentsOfFile: other.path("Notes/Inbox/report.txt"), encoding: .utf8)) == "shared draft"
        }, "the export reached the other device")

        // To a folder outside the mount: the bytes, the tags, the time.
        let plain = fixture.root + "/plain"
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        XCTAssertEqual(fixture.folio("export '\(document)' '\(plain)'").status, 0)
        XCTAssertEqual(Shell.check("cat '\(plain)/report.txt'"), "shared draft")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.xdg.tags '\(plain)/report.txt'"), "draft")
        XCTAssertEqual(Shell.check("stat -c %Y '\(plain)/report.txt'"), "1620284889\n")
        XCTAssertEqual(Shell.check("ls -A '\(plain)'"), "report.txt\n", "no temporary file left")

        // Refused: a name the folder has (left as it is), a destination that is no folder, a source outside a mount.
        Shell.check("printf mine > '\(plain)/report.txt'")
        let taken = fixture.folio("export '\(document)' '\(plain)'")
        XCTAssertNotEqual(taken.status, 0)
        XCTAssertTrue(taken.stderr.contains("exists"), taken.stderr)
        XCTAssertEqual(Shell.check("cat '\(plain)/report.txt'"), "mine")
        XCTAssertNotEqual(fixture.folio("export '\(document)' '\(plain)/report.txt'").status, 0)
        XCTAssertNotEqual(fixture.folio("export '\(plain)/report.txt' '\(plain)'").status, 0)
        XCTAssertEqual(Shell.check("ls -A '\(plain)'"), "report.txt\n")
    }

    func testMoveTakesADocumentToAnotherContainerAndLeavesAReference() throws {
        let document = fixture.path("Docs/report.txt")
        let id = Shell.check("getfattr --only-values -n user.folio.id '\(document)'")
        let token = fixture.folio("bookmark '\(document)'").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let moved = fixture.folio("move '\(document)' '\(fixture.path("Notes/Inbox"))'")
        XCTAssertEqual(moved.status, 0, moved.stderr)
        let destination = fixture.path("Notes/Inbox/report.txt")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.id '\(destination)'"), id, "the same item")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.container '\(destination)'"), notes)
        XCTAssertEqual(Shell.check("stat -c %i '\(document)'"), Shell.check("stat -c %i '\(destination)'"),
                       "the old place opens it in place")
        Shell.check("printf 'edited at the old place' > '\(document)'")
        XCTAssertEqual(Shell.check("cat '\(destination)'"), "edited at the old place")
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("Inbox/report.txt", container: notes), "edited at the old place")
        XCTAssertNil(fixture.remoteText("Docs/report.txt"), "moved on the remote, no copy left")
        let resolved = fixture.folio("resolve --mount '\(fixture.mountpoint)' '\(token)'")
        XCTAssertEqual(resolved.stdout, destination + "\n", "a bookmark resolves to the document's own place")

        // A second device: the document in its new container, nothing at the old place (references are local).
        let other = try secondDevice()
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            (try? String(contentsOfFile: other.path("Notes/Inbox/report.txt"), encoding: .utf8))
                == "edited at the old place"
        })
        XCTAssertEqual(Shell.check("ls -A '\(other.path("Docs"))'"), "")

        // Refused: into its own container, a folder, a destination in another mount.
        Shell.check("mkdir '\(fixture.path("Docs/Sub"))' && printf x > '\(fixture.path("Docs/x.txt"))'")
        let same = fixture.folio("move '\(fixture.path("Docs/x.txt"))' '\(fixture.path("Docs/Sub"))'")
        XCTAssertTrue(same.stderr.contains("same container"), same.stderr)
        let folder = fixture.folio("move '\(fixture.path("Docs/Sub"))' '\(fixture.path("Notes"))'")
        XCTAssertTrue(folder.stderr.contains("only documents"), folder.stderr)
        let elsewhere = fixture.folio("move '\(fixture.path("Docs/x.txt"))' '\(other.path("Notes"))'")
        XCTAssertNotEqual(elsewhere.status, 0)
        XCTAssertEqual(Shell.check("LC_ALL=C ls '\(fixture.path("Docs"))'"), "Sub\nreport.txt\nx.txt\n")
        // Once every change came back from the remote (the container it left reports it gone from there), the
        // document is still the same item here, and the reference still opens it.
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.id '\(destination)'"), id)
        XCTAssertEqual(Shell.check("stat -c %i '\(document)'"), Shell.check("stat -c %i '\(destination)'"))
    }
}
