import FolioCore
import Foundation
import XCTest

/// Issue 19 "Thumbnails for placeholders" and "Types without content": what Folio learns from a document while its
/// content is here (its type, its thumbnails) is kept at the remote, so another device shows both for a placeholder
/// without downloading it; the desktop's thumbnail cache follows renames, moves, new versions and deletes.
///
/// The cache is checked through GIO (`gio info -a thumbnail::*`), which reads it the way Nautilus and the GTK file
/// chooser do; downloads are counted with `user.folio.state` (a placeholder fetched nothing, not even a part).
class ThumbnailMountTests: MountTestCase {
    override var mountArguments: [String] { ["--poll-interval", "600"] }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try XCTSkipUnless(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/gdk-pixbuf-thumbnailer"),
            "needs gdk-pixbuf-thumbnailer (Debian libgdk-pixbuf2.0-bin, installed by scripts/bootstrap)")
    }

    private func attribute(_ name: String, _ path: String) -> String? { ExtendedAttributes.value(name, of: path) }

    /// What GIO finds in the thumbnail cache for `path`, as `mount`'s desktop session would.
    private func thumbnailInfo(_ mount: MountFixture, _ relative: String) -> [String: String] {
        let output = Shell.run("gio info -a 'thumbnail::*' '\(mount.path(relative))'", environment: mount.environment)
        var values: [String: String] = [:]
        for line in output.stdout.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("thumbnail::"), let colon = text.range(of: ": ") else { continue }
            values[String(text[..<colon.lowerBound])] = String(text[colon.upperBound...])
        }
        return values
    }

    /// Whether GIO finds a valid thumbnail for `relative` in `mount`'s cache.
    private func hasValidThumbnail(_ mount: MountFixture, _ relative: String) -> Bool {
        thumbnailInfo(mount, relative)["thumbnail::is-valid"] == "TRUE"
    }

    private func writeImage(_ path: String, width: Int, height: Int, seed: UInt8 = 0) throws {
        let png = PNGEncoder.encode(width: width, height: height) { x, y in (UInt8(x & 255), UInt8(y & 255), seed) }
        try Data(png).write(to: URL(fileURLWithPath: path))
    }

    private func startOtherDevice() throws -> MountFixture {
        let device = try MountFixture(extraArguments: ["--poll-interval", "1"], remote: fixture.remote)
        addTeardownBlock { device.tearDown() }
        try device.start()
        return device
    }

    /// The width and height of a PNG file.
    private func dimensions(_ path: String) -> (Int, Int)? {
        guard let data = FileManager.default.contents(atPath: path), data.count > 24 else { return nil }
        let bytes = [UInt8](data)
        let value = { (offset: Int) in bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (value(16), value(20))
    }

    func testADocumentWrittenHereIsTypedAndThumbnailedAndAnotherDeviceHasBothWithoutItsContent() throws {
        try writeImage(fixture.path("photo.png"), width: 600, height: 300)
        try writeImage(fixture.path("scan"), width: 64, height: 64)  // no extension: typed by its magic
        Shell.check("echo 'plain words' > '\(fixture.path("notes.txt"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            self.attribute("user.mime_type", self.fixture.path("scan")) == "image/png"
                && self.hasValidThumbnail(self.fixture, "photo.png") && self.hasValidThumbnail(self.fixture, "scan")
        }, "typed and thumbnailed here after the upload; log:\n\(fixture.log.suffix(3000))")
        XCTAssertEqual(attribute("user.mime_type", fixture.path("photo.png")), "image/png")
        XCTAssertEqual(attribute("user.folio.type", fixture.path("notes.txt")), "text/plain")
        let listed = Shell.check("getfattr --absolute-names -d '\(fixture.path("photo.png"))'")
        XCTAssertTrue(listed.contains("user.mime_type=\"image/png\""), listed)
        XCTAssertFalse(listed.contains("user.folio.description"), "Folio's own record is not listed: \(listed)")
        // The standard's keys: the thumbnail names its file and the file's modification time.
        let info = thumbnailInfo(fixture, "photo.png")
        let thumbnail = info["thumbnail::path"] ?? ""
        XCTAssertTrue(thumbnail.hasPrefix(fixture.thumbnails + "/"), "\(info)")

        // Another device: placeholders, with their types and thumbnails, and nothing downloaded.
        let other = try startOtherDevice()
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            self.hasValidThumbnail(other, "photo.png") && self.hasValidThumbnail(other, "scan")
        }, "the other device's cache has the thumbnails; log:\n\(other.log.suffix(3000))")
        for name in ["photo.png", "scan", "notes.txt"] {
            XCTAssertEqual(attribute("user.folio.state", other.path(name)), "placeholder", "\(name) was not downloaded")
        }
        XCTAssertEqual(attribute("user.mime_type", other.path("scan")), "image/png")
        XCTAssertEqual(attribute("user.folio.type", other.path("notes.txt")), "text/plain")
        XCTAssertEqual(thumbnailInfo(other, "notes.txt")["thumbnail::is-valid"], nil, "no thumbnailer for text here")

        // `folio thumbnail`, of a placeholder, in both sizes.
        let out = fixture.root + "/large.png"
        let result = other.folio("thumbnail '\(other.path("photo.png"))' --size large > '\(out)'")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(dimensions(out).map { $0 == (256, 128) } ?? false, "\(String(describing: dimensions(out)))")
        let normal = other.folio("thumbnail '\(other.path("photo.png"))' > '\(out)'")
        XCTAssertEqual(normal.status, 0, normal.stderr)
        XCTAssertTrue(dimensions(out).map { $0 == (128, 64) } ?? false, "\(String(describing: dimensions(out)))")
        XCTAssertEqual(attribute("user.folio.state", other.path("photo.png")), "placeholder")
        // Bad input: a file without a thumbnail, a size that does not exist, a terminal for a PNG.
        let text = other.folio("thumbnail '\(other.path("notes.txt"))' > '\(out)'")
        XCTAssertNotEqual(text.status, 0)
        XCTAssertTrue(text.stderr.contains("no thumbnailer here handles text/plain"), text.stderr)
        let size = other.folio("thumbnail '\(other.path("photo.png"))' --size huge > '\(out)'")
        XCTAssertNotEqual(size.status, 0)
        XCTAssertTrue(size.stderr.contains("normal (128 pixels) and large (256)"), size.stderr)
        let terminal = Shell.run(
            "script -qec \"'\(MountFixture.executable)' thumbnail '\(other.path("photo.png"))'\" /dev/null",
            environment: other.environment)
        XCTAssertTrue(terminal.stdout.contains("send it to a file"), terminal.stdout + terminal.stderr)
    }

    /// The device with the content describes it a moment after the other device saw the new version: the other
    /// asks again until the description is there.
    func testADeviceOnlineWhileADocumentIsWrittenElsewhereGetsItsThumbnail() throws {
        let other = try startOtherDevice()
        for round in 0..<3 {
            let name = "shot\(round).png"
            try writeImage(fixture.path(name), width: 200 + round, height: 100, seed: UInt8(round))
            XCTAssertTrue(Shell.waitUntil(timeout: 60) { self.hasValidThumbnail(other, name) },
                          "round \(round): the other device's cache; log:\n\(other.log.suffix(3000))")
            XCTAssertEqual(attribute("user.folio.state", other.path(name)), "placeholder", "round \(round)")
            XCTAssertEqual(attribute("user.mime_type", other.path(name)), "image/png", "round \(round)")
        }
    }

    func testTheCacheFollowsRenamesMovesNewVersionsAndDeletes() throws {
        try writeImage(fixture.path("photo.png"), width: 300, height: 300)
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { self.hasValidThumbnail(self.fixture, "photo.png") },
                      String(fixture.log.suffix(3000)))
        let first = thumbnailInfo(fixture, "photo.png")["thumbnail::path"] ?? "?"

        // A rename, then a move into a folder, then the folder's rename: the thumbnail goes along, the old
        // entry goes away.
        Shell.check("mkdir '\(fixture.path("album"))' && mv '\(fixture.path("photo.png"))' '\(fixture.path("album/cover.png"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.hasValidThumbnail(self.fixture, "album/cover.png") && !FileManager.default.fileExists(atPath: first)
        }, "moved with the file; log:\n\(fixture.log.suffix(3000))")
        let moved = thumbnailInfo(fixture, "album/cover.png")["thumbnail::path"] ?? "?"
        Shell.check("mv '\(fixture.path("album"))' '\(fixture.path("holiday"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.hasValidThumbnail(self.fixture, "holiday/cover.png") && !FileManager.default.fileExists(atPath: moved)
        }, "moved with its folder; log:\n\(fixture.log.suffix(3000))")

        // A new version (another shape): the thumbnail is made again for it.
        let large = { self.thumbnailInfo(self.fixture, "holiday/cover.png")["thumbnail::path"] ?? "?" }
        try writeImage(fixture.path("holiday/cover.png"), width: 100, height: 400, seed: 7)
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            self.hasValidThumbnail(self.fixture, "holiday/cover.png")
                && self.dimensions(large()).map { $0.0 < $0.1 } == true
        }, "a thumbnail of the new version; log:\n\(fixture.log.suffix(3000))")

        // Deleted: its entries go.
        let last = large()
        Shell.check("rm '\(fixture.path("holiday/cover.png"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { !FileManager.default.fileExists(atPath: last) },
                      "removed with the item; log:\n\(fixture.log.suffix(3000))")
    }

    func testAThumbnailerThatFailsLeavesAFailureRecordSoNobodyDownloadsToTryAgain() throws {
        // A PNG signature and then garbage: the type is image/png, gdk-pixbuf cannot read it.
        Shell.check("printf '\\x89PNG\\r\\n\\x1a\\n' > '\(fixture.path("broken.png"))'; head -c 5000 /dev/urandom >> '\(fixture.path("broken.png"))'")
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            self.thumbnailInfo(self.fixture, "broken.png")["thumbnail::failed"] == "TRUE"
        }, "a failure record here; log:\n\(fixture.log.suffix(3000))")
        XCTAssertEqual(attribute("user.mime_type", fixture.path("broken.png")), "image/png")

        let other = try startOtherDevice()
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            self.thumbnailInfo(other, "broken.png")["thumbnail::failed"] == "TRUE"
        }, "and on the other device, for its placeholder; log:\n\(other.log.suffix(3000))")
        XCTAssertEqual(attribute("user.folio.state", other.path("broken.png")), "placeholder")
        let result = other.folio("thumbnail '\(other.path("broken.png"))' > /dev/null")
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("the thumbnailer failed on this version"), result.stderr)
    }

    /// What the desktop's own tools make of `user.mime_type` (issue 19 asks which read it): GIO 2.74 and `file`
    /// 5.44 decide a type from the name and the content, and never read the attribute. So a placeholder's type
    /// costs them a few KiB of partial reads (`PartialReadTests`), and `user.mime_type` serves the programs that
    /// ask for it (and `getfattr`). If a later GIO or `file` reads it, this test says so.
    func testGIOAndFileDecideTypesFromContentNotFromTheAttribute() throws {
        try writeImage(fixture.path("picture"), width: 16, height: 16)
        Shell.check("setfattr -n user.mime_type -v text/x-not-this '\(fixture.path("picture"))'")
        XCTAssertEqual(attribute("user.mime_type", fixture.path("picture")), "text/x-not-this", "a set value wins")
        let gio = Shell.check("gio info -a standard::content-type '\(fixture.path("picture"))'")
        XCTAssertTrue(gio.contains("standard::content-type: image/png"), gio)
        let file = Shell.check("file --brief --mime-type '\(fixture.path("picture"))'")
        XCTAssertEqual(file.trimmingCharacters(in: .whitespacesAndNewlines), "image/png")
    }
}
