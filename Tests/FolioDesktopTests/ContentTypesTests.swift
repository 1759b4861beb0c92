import FolioCore
@testable import FolioDesktop
import XCTest

/// Types decided as the desktop decides them (shared-mime-info through GLib): the name's globs, then the magic.
final class ContentTypesTests: XCTestCase {
    func testTheNameDecidesWhereItIsClearAndTheBytesWhereItIsNot() {
        let png = PNGEncoder.encode(width: 2, height: 2) { _, _ in (0, 0, 0) }
        XCTAssertEqual(ContentTypes.guess(name: "photo.png", sample: png), "image/png")
        XCTAssertEqual(ContentTypes.guess(name: "photo", sample: png), "image/png", "no extension: the magic")
        XCTAssertEqual(ContentTypes.guess(name: "notes.txt", sample: Array("hello\n".utf8)), "text/plain")
        XCTAssertEqual(ContentTypes.guess(name: "Makefile", sample: Array("all:\n\ttrue\n".utf8)), "text/x-makefile")
        XCTAssertEqual(ContentTypes.guess(name: "%PDF", sample: Array("%PDF-1.7\n".utf8)), "application/pdf")
    }

    func testKindsOfTypes() {
        XCTAssertTrue(ContentTypes.type("image/png", isA: "image/png"))
        XCTAssertTrue(ContentTypes.type("text/x-csrc", isA: "text/plain"))
        XCTAssertFalse(ContentTypes.type("image/png", isA: "text/plain"))
    }
}
