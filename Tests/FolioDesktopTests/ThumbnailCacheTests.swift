import FolioCore
@testable import FolioDesktop
import Foundation
import XCTest

/// The thumbnail cache's names and files, checked against the Thumbnail Managing Standard's own example and
/// against GIO, which reads the cache the way Nautilus does.
final class ThumbnailCacheTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("thumbs-\(UUID().uuidString.prefix(8))").path
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: root)
    }

    func testNamesAreTheMD5OfTheURIAsTheStandardsExampleGives() {
        // The standard's example: file:///home/jens/photos/me.png → c6ee772d9e49320e97ec29a7eb5b1697.png.
        XCTAssertEqual(ThumbnailCache.uri(ofPath: "/home/jens/photos/me.png"), "file:///home/jens/photos/me.png")
        XCTAssertEqual(ThumbnailCache.hash(ofURI: "file:///home/jens/photos/me.png"), "c6ee772d9e49320e97ec29a7eb5b1697")
        // Spaces and non-ASCII names are escaped as GLib escapes them.
        XCTAssertEqual(ThumbnailCache.uri(ofPath: "/tmp/a b/é.png"), "file:///tmp/a%20b/%C3%A9.png")
    }

    func testAWrittenThumbnailCarriesItsURIAndTimeAndIsPrivate() throws {
        let cache = ThumbnailCache(root: root + "/thumbnails")
        let png = PNGEncoder.encode(width: 20, height: 10) { x, _ in (UInt8(x), 0, 0) }
        let uri = "file:///somewhere/x.png"
        try cache.write(png, of: uri, size: .normal, modificationTime: Timestamp(seconds: 1_700_000_000, nanoseconds: 0))
        let path = cache.path(of: uri, size: .normal)
        let written = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let texts = try XCTUnwrap(PNGText.texts(of: [UInt8](written)))
        XCTAssertEqual(texts["Thumb::URI"], uri)
        XCTAssertEqual(texts["Thumb::MTime"], "1700000000")
        XCTAssertEqual(cache.modificationTime(of: uri, size: .normal), "1700000000")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: root + "/thumbnails/normal")
        XCTAssertEqual((folder[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        // Written again (a new time), the keys are replaced, not repeated.
        let later = Timestamp(seconds: 1_700_000_001, nanoseconds: 5_000)
        try cache.write(written.map { $0 }, of: uri, size: .normal, modificationTime: later)
        let again = try XCTUnwrap(FileManager.default.contents(atPath: path))
        let chunks = try XCTUnwrap(PNGText.chunks(of: [UInt8](again)))
        XCTAssertEqual(chunks.filter { $0.type == "tEXt" }.count, 3)
        XCTAssertEqual(cache.modificationTime(of: uri, size: .normal), "1700000001", "whole seconds, as the standard")
        // For Xfce's tumbler: the microseconds too.
        let xfce = ThumbnailCache(root: root + "/thumbnails", timeStyle: .microseconds)
        try xfce.write(written.map { $0 }, of: uri, size: .normal, modificationTime: later)
        XCTAssertEqual(xfce.modificationTime(of: uri, size: .normal), "1700000001.000005")
        XCTAssertEqual(
            ThumbnailCache.ofCurrentUser(environment: ["HOME": "/h", "XDG_CURRENT_DESKTOP": "XFCE"])?.timeStyle,
            .microseconds)
        XCTAssertEqual(
            ThumbnailCache.ofCurrentUser(environment: ["HOME": "/h", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"])?.timeStyle,
            .seconds)
        cache.remove(uri)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testNotAPNGIsRefusedAndNothingIsWritten() {
        let cache = ThumbnailCache(root: root + "/thumbnails")
        var png = PNGEncoder.encode(width: 4, height: 4) { _, _ in (1, 2, 3) }
        png[20] ^= 0xFF  // a byte of IHDR: its CRC no longer matches
        let time = Timestamp(seconds: 1, nanoseconds: 0)
        XCTAssertThrowsError(try cache.write(png, of: "file:///x", size: .large, modificationTime: time))
        XCTAssertThrowsError(try cache.write(Array("GIF89a".utf8), of: "file:///x", size: .large, modificationTime: time))
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache.path(of: "file:///x", size: .large)))
    }

    /// GIO (the library Nautilus and the GTK file chooser read the cache with) finds what Folio wrote: a valid
    /// thumbnail for a file with the recorded time, an invalid one once the file's time moves on, and a failure
    /// record as `thumbnail::failed`.
    func testGIOFindsTheThumbnailsAndTheFailureRecords() throws {
        let documents = root + "/docs"
        try FileManager.default.createDirectory(atPath: documents, withIntermediateDirectories: true)
        let image = documents + "/photo.png", broken = documents + "/broken.png"
        _ = FileManager.default.createFile(atPath: image, contents: Data([1, 2, 3]))
        _ = FileManager.default.createFile(atPath: broken, contents: Data([4, 5, 6]))
        let cache = ThumbnailCache(root: root + "/thumbnails")
        var status = stat()
        XCTAssertEqual(stat(image, &status), 0)
        let modified = Timestamp(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: Int64(status.st_mtim.tv_nsec))
        let time = Double(status.st_mtim.tv_sec)
        let png = PNGEncoder.encode(width: 128, height: 64) { x, y in (UInt8(x), UInt8(y), 9) }
        XCTAssertNotEqual(modified.nanoseconds, 0, "a time with a fraction of a second, as files have")
        try cache.write(png, of: try XCTUnwrap(ThumbnailCache.uri(ofPath: image)), size: .normal, modificationTime: modified)
        var brokenStatus = stat()
        XCTAssertEqual(stat(broken, &brokenStatus), 0)
        try cache.writeFailure(
            of: try XCTUnwrap(ThumbnailCache.uri(ofPath: broken)),
            modificationTime: Timestamp(seconds: Int64(brokenStatus.st_mtim.tv_sec), nanoseconds: Int64(brokenStatus.st_mtim.tv_nsec)))
        let found = gioInfo(image)
        XCTAssertEqual(found["thumbnail::path"], cache.path(of: ThumbnailCache.uri(ofPath: image)!, size: .normal))
        XCTAssertEqual(found["thumbnail::is-valid"], "TRUE")
        XCTAssertEqual(gioInfo(broken)["thumbnail::failed"], "TRUE")
        // A new time: GIO no longer takes the thumbnail for the file's.
        let later = Date(timeIntervalSince1970: time + 10)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: image)
        XCTAssertEqual(gioInfo(image)["thumbnail::is-valid"], "FALSE")
    }

    private func gioInfo(_ path: String) -> [String: String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gio")
        process.arguments = ["info", "-a", "thumbnail::*", path]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = root
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        guard (try? process.run()) != nil else { return [:] }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var values: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("thumbnail::"), let colon = text.range(of: ": ") else { continue }
            values[String(text[..<colon.lowerBound])] = String(text[colon.upperBound...])
        }
        return values
    }
}
