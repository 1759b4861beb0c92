import FolioCore
import Foundation
import XCTest

/// A walk of a tree of placeholders (`find`, a file manager) lists folders and describes nothing on the way
/// (issue 36: describing every listed placeholder, its type by name recorded and stored again, was 40 % of the
/// daemon's work in a first `find` of 1,000,000 items). A placeholder's type by its name is answered when it is
/// read; what a description of the content says (a type from the bytes, thumbnails) is still made and stored.
final class PlaceholderWalkTests: MountTestCase {
    private let folders = 3
    private let filesPerFolder = 100

    override func prepareRemote() throws {
        for folder in 0..<folders {
            let path = fixture.remotePath("folder\(folder)")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for file in 0..<filesPerFolder {
                try "text \(file)\n".write(toFile: "\(path)/note\(file).txt", atomically: false, encoding: .utf8)
            }
        }
    }

    /// The nodes of the store that carry a description of their content.
    private func storedDescriptions() -> Int? {
        let query = "SELECT count(*) FROM node WHERE instr(xattrs, CAST('user.folio.description' AS BLOB)) > 0"
        let script = """
            import sqlite3, sys
            store = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True, timeout=10)
            print(store.execute("\(query)").fetchone()[0])
            """
        let result = Shell.run(
            "python3 -c \"$SCRIPT\" '\(fixture.state)/metadata.sqlite'", environment: ["SCRIPT": script])
        guard let count = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            XCTFail("cannot read the store: \(result.stderr)")
            return nil
        }
        return count
    }

    func testAWalkOfPlaceholdersStoresNoDescriptionsAndTheirTypesAreStillRead() throws {
        try XCTSkipUnless(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/gdk-pixbuf-thumbnailer"),
            "needs gdk-pixbuf-thumbnailer (Debian libgdk-pixbuf2.0-bin, installed by scripts/bootstrap)")
        let listed = Shell.check("find '\(fixture.mountpoint)' -name 'note*.txt' | wc -l")
        XCTAssertEqual(Int(listed.trimmingCharacters(in: .whitespacesAndNewlines)), folders * filesPerFolder)
        let placeholder = fixture.path("folder1/note7.txt")
        XCTAssertEqual(ExtendedAttributes.value("user.mime_type", of: placeholder), "text/plain")
        XCTAssertEqual(ExtendedAttributes.value("user.folio.type", of: placeholder), "text/plain")
        let names = Shell.check("getfattr --absolute-names -d -m - '\(placeholder)'")
        XCTAssertTrue(names.contains("user.mime_type=\"text/plain\""), names)
        XCTAssertTrue(names.contains("user.folio.type=\"text/plain\""), names)

        // An image written here is described once it is uploaded (its type then comes from its description: a
        // thumbnailer handles images, so the name alone gives none). The describer took what the walk listed
        // before it: its work is taken whole.
        let png = PNGEncoder.encode(width: 32, height: 32) { x, y in (UInt8(x), UInt8(y), 7) }
        try Data(png).write(to: URL(fileURLWithPath: fixture.path("photo.png")))
        fixture.waitForUploads()
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            ExtendedAttributes.value("user.mime_type", of: self.fixture.path("photo.png")) == "image/png"
        }, "the image written here is described; log:\n\(fixture.log.suffix(3000))")
        XCTAssertEqual(ExtendedAttributes.value("user.folio.state", of: placeholder), "placeholder", "nothing read")

        fixture.stop()  // (the daemon holds its store exclusively)
        XCTAssertEqual(storedDescriptions(), 1, "the image's description only: nothing of the walk's placeholders")
    }
}
