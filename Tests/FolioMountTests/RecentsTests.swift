import FolioCore
import Foundation
import XCTest

/// Recents (issue 16, "Tags and recents that travel": the recents half): `folio recents`, `.Recents/` in app
/// views, and the desktop's `recently-used.xbel`.
class RecentsTests: MountTestCase {
    private let secret = "com.example.secret"

    override func prepareRemote() throws {
        try fixture.addContainer(Container(id: ContainerID(secret), displayName: "Secret", isPublic: false))
        try Data("private".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("key.txt", container: secret)))
        try FileManager.default.createDirectory(atPath: fixture.remotePath("Docs"), withIntermediateDirectories: true)
        for name in ["a.txt", "b.txt", "c d.txt"] {
            try Data("text of \(name)".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Docs/" + name)))
        }
        fixture.handRemoteToServer()
    }

    private func recents(_ arguments: String = "") throws -> [[String: String]] {
        let result = fixture.folio("recents --json --mount '\(fixture.mountpoint)' \(arguments)")
        XCTAssertEqual(result.status, 0, result.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]])
    }

    /// Opens a file and waits until the next second, so every use has its own time.
    private func use(_ path: String) {
        Shell.check("cat '\(path)' > /dev/null")
        let second = Int(Date().timeIntervalSince1970)
        Shell.waitUntil(timeout: 2) { Int(Date().timeIntervalSince1970) > second }
    }

    func testRecentsFollowRenamesAndEachViewShowsWhatItMayOpen() throws {
        let view = fixture.root + "/secret"
        try FileManager.default.createDirectory(atPath: view, withIntermediateDirectories: true)
        addTeardownBlock { Shell.run("fusermount3 -u -z '\(view)' 2>/dev/null; true") }
        XCTAssertEqual(fixture.folio("mount --app \(secret) --of '\(fixture.mountpoint)' '\(view)'").status, 0)
        XCTAssertEqual(fixture.folio("grant '\(fixture.path("Docs/b.txt"))' --app \(secret) --as granted.txt").status, 0)
        use(fixture.path("Docs/a.txt"))
        use(view + "/key.txt")
        use(fixture.path("Docs/b.txt"))

        XCTAssertEqual(try recents().map { $0["path"] }, ["Docs/b.txt", "Docs/a.txt"], "the full view: no private one")
        XCTAssertEqual(Shell.check("ls '\(fixture.path(".Recents"))'"), "a.txt\nb.txt\n")
        XCTAssertEqual(try recents("--app \(secret)").map { $0["path"] }, ["granted.txt", "key.txt"])
        XCTAssertEqual(Shell.check("ls -A '\(view)'"), ".Recents\ngranted.txt\nkey.txt\n")
        XCTAssertEqual(Shell.check("ls '\(view)/.Recents'"), "granted.txt\nkey.txt\n", "the app's own and granted")
        XCTAssertEqual(Shell.check("cat '\(view)/.Recents/granted.txt'"), "text of b.txt")
        XCTAssertEqual(
            Shell.check("stat -c %i '\(view)/.Recents/key.txt'"), Shell.check("stat -c %i '\(view)/key.txt'"))
        let refused = Shell.run("touch '\(view)/.Recents/new.txt'")
        XCTAssertTrue(refused.stderr.contains("Read-only file system"), refused.stderr)

        // Kept by item: a rename keeps the document among the recents, under its new name.
        Shell.check("mv '\(fixture.path("Docs/a.txt"))' '\(fixture.path("Docs/renamed.txt"))'")
        XCTAssertEqual(try recents().map { $0["path"] }, ["Docs/b.txt", "Docs/renamed.txt"])
        let text = fixture.folio("recents --mount '\(fixture.mountpoint)'")
        XCTAssertTrue(text.stdout.contains("\t\(fixture.path("Docs/renamed.txt"))\n"), text.stdout)
        // An app view's socket answers for its own recents only.
        let own = fixture.folio("recents --json --mount '\(view)'")
        XCTAssertTrue(own.stdout.contains("key.txt") && !own.stdout.contains("renamed"), own.stdout)
        let other = fixture.folio("recents --mount '\(view)' --app com.folio.drive")
        XCTAssertNotEqual(other.status, 0)
        XCTAssertTrue(other.stderr.contains("only its own recents"), other.stderr)
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(try recents().map { $0["path"] }, ["Docs/b.txt", "Docs/renamed.txt"], "after a restart")
    }

    func testDocumentsUsedThroughTheMountAreAddedToTheDesktopsRecentFiles() throws {
        // Another program's entry, in GTK's format: it must be kept.
        try FileManager.default.createDirectory(atPath: fixture.root + "/data", withIntermediateDirectories: true)
        let theirs = """
            <?xml version="1.0" encoding="UTF-8"?>
            <xbel version="1.0" xmlns:bookmark="http://www.freedesktop.org/standards/desktop-bookmarks" \
            xmlns:mime="http://www.freedesktop.org/standards/shared-mime-info">
              <bookmark href="file:///srv/other.pdf" added="2024-01-01T10:00:00.000000Z" \
            modified="2024-01-01T10:00:00.000000Z" visited="2024-01-01T10:00:00.000000Z">
                <info><metadata owner="http://freedesktop.org"><mime:mime-type type="application/pdf"/>
                  <bookmark:applications><bookmark:application name="Evince" exec="&apos;evince %u&apos;" \
            modified="2024-01-01T10:00:00.000000Z" count="1"/></bookmark:applications>
                </metadata></info>
              </bookmark>
            </xbel>
            """
        try Data(theirs.utf8).write(to: URL(fileURLWithPath: fixture.recentFiles))
        Shell.check("cat '\(fixture.path("Docs/c d.txt"))' > /dev/null")
        Shell.check("printf saved > '\(fixture.path("Docs/new.txt"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 20) {
            let text = (try? String(contentsOfFile: self.fixture.recentFiles, encoding: .utf8)) ?? ""
            return text.contains("c%20d.txt") && text.contains("new.txt")
        }, "the documents reached recently-used.xbel")
        let checker = """
            import sys, xml.etree.ElementTree as ET, re
            B = '{http://www.freedesktop.org/standards/desktop-bookmarks}'
            M = '{http://www.freedesktop.org/standards/shared-mime-info}'
            root = ET.parse(sys.argv[1]).getroot()
            assert root.tag == 'xbel' and root.get('version') == '1.0', root.tag
            stamp = re.compile(r'^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z$')
            for bookmark in root.findall('bookmark'):
                for field in ('added', 'modified', 'visited'):
                    assert stamp.match(bookmark.get(field) or ''), (field, bookmark.get(field))
                metadata = bookmark.find('info/metadata')
                assert metadata.get('owner') == 'http://freedesktop.org'
                mime = metadata.find(M + 'mime-type').get('type')
                apps = [(a.get('name'), a.get('count')) for a in metadata.find(B + 'applications')]
                print(bookmark.get('href'), mime, apps)
            """
        let parsed = Shell.run("python3 - '\(fixture.recentFiles)' <<'EOF'\n\(checker)\nEOF")
        XCTAssertEqual(parsed.status, 0, parsed.stderr)
        let lines = Set(parsed.stdout.split(separator: "\n").map(String.init))
        let base = "file://" + fixture.mountpoint
        XCTAssertTrue(lines.contains("file:///srv/other.pdf application/pdf [('Evince', '1')]"), parsed.stdout)
        XCTAssertTrue(lines.contains("\(base)/Docs/c%20d.txt text/plain [('Folio', '1')]"), parsed.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("\(base)/Docs/new.txt text/plain [('Folio', ") }, parsed.stdout)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: fixture.root + "/data"), ["recently-used.xbel"],
            "written whole and renamed into place: no temporary file left")

        // A file GLib cannot read is left as it is, never replaced by one without the others' entries.
        try Data("<xbel version=\"1.0\"><bookmark".utf8).write(to: URL(fileURLWithPath: fixture.recentFiles))
        Shell.check("cat '\(fixture.path("Docs/a.txt"))' > /dev/null")
        XCTAssertTrue(Shell.waitUntil(timeout: 20) { self.fixture.log.contains("cannot be read") })
        XCTAssertEqual(try String(contentsOfFile: fixture.recentFiles, encoding: .utf8), "<xbel version=\"1.0\"><bookmark")
    }

    func testTheDesktopsListKeepsFiftyOfTheMountsDocumentsAndEverythingOthersRegistered() throws {
        // An entry of a document of the mount that a text editor registered too: it stays whatever happens.
        try FileManager.default.createDirectory(atPath: fixture.root + "/data", withIntermediateDirectories: true)
        let shared = "file://" + fixture.mountpoint + "/Docs/a.txt"
        let theirs = """
            <?xml version="1.0" encoding="UTF-8"?>
            <xbel version="1.0" xmlns:bookmark="http://www.freedesktop.org/standards/desktop-bookmarks" \
            xmlns:mime="http://www.freedesktop.org/standards/shared-mime-info">
              <bookmark href="\(shared)" added="2024-01-01T10:00:00Z" modified="2024-01-01T10:00:00Z" \
            visited="2024-01-01T10:00:00Z">
                <info><metadata owner="http://freedesktop.org"><mime:mime-type type="text/plain"/>
                  <bookmark:applications><bookmark:application name="gedit" exec="&apos;gedit %u&apos;" \
            modified="2024-01-01T10:00:00Z" count="3"/></bookmark:applications>
                </metadata></info>
              </bookmark>
            </xbel>
            """
        try Data(theirs.utf8).write(to: URL(fileURLWithPath: fixture.recentFiles))
        Shell.check("mkdir '\(fixture.path("Many"))' && for i in $(seq 1 70); do printf x > '\(fixture.path("Many"))'/f$i.txt; done")
        Shell.check("cat '\(fixture.path("Docs/a.txt"))' > /dev/null")
        Shell.check("cat '\(fixture.path("Many"))'/f70.txt > /dev/null")
        let counter = """
            import sys, xml.etree.ElementTree as ET
            B = '{http://www.freedesktop.org/standards/desktop-bookmarks}'
            root = ET.parse(sys.argv[1]).getroot()
            many = [b for b in root.findall('bookmark') if '/Many/' in b.get('href')]
            apps = {b.get('href'): sorted(a.get('name') for a in b.find('info/metadata').find(B + 'applications'))
                    for b in root.findall('bookmark')}
            print(len(many), apps.get(sys.argv[2]), any(h.endswith('/Many/f70.txt') for h in apps))
            """
        var last = ""
        XCTAssertTrue(Shell.waitUntil(timeout: 20) {
            last = Shell.run("python3 - '\(self.fixture.recentFiles)' '\(shared)' <<'EOF'\n\(counter)\nEOF").stdout
            return last == "50 ['Folio', 'gedit'] True\n"
        }, "50 of the 70 documents, the last one among them; the shared entry kept with both applications: " + last)
    }

    /// A write that fails for a reason that can clear (here the data folder cannot be made: a file has its name) is
    /// tried again, without a new use, once it can succeed.
    func testARecentFilesWriteThatFailsIsTriedAgainWhenItCanSucceed() throws {
        let data = fixture.root + "/data"
        Shell.check("rm -rf '\(data)' && printf 'not a folder' > '\(data)'")
        Shell.check("cat '\(fixture.path("Docs/b.txt"))' > /dev/null")
        XCTAssertTrue(Shell.waitUntil(timeout: 20) { self.fixture.log.contains("cannot add 1 documents") })
        Shell.check("rm '\(data)' && mkdir '\(data)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            ((try? String(contentsOfFile: self.fixture.recentFiles, encoding: .utf8)) ?? "").contains("/Docs/b.txt")
        }, "the use was written once the folder could be made")
    }
}
