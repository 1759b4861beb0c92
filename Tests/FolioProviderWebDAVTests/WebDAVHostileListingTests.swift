import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// Issue 15, faults: a listing the server sends that cannot be trusted (malformed, truncated or hostile XML, hrefs
/// on another host, with `..`, with an encoded `/`, empty) fails the listing with a clear `providerFailure` and
/// makes no item, not even of the good members listed beside the bad one; ETags as real servers send them (weak,
/// unquoted) are taken.
final class WebDAVHostileListingTests: XCTestCase {
    private var fixture: FaultFixture!

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws { await fixture?.stop() }

    private var drive: String { FaultFixture.drive }

    /// A good member listed before the bad part, so a listing taken in part would make it.
    private var good: String { MultistatusBody.response(drive + "good.txt", etag: "\"g1\"", length: 4) }

    /// Lists the Drive against a server that answers the listing with `body`, expects a `providerFailure` whose
    /// message contains `saying`, and checks that nothing was made of it and that the listing was asked for once.
    private func assertListingRefused(
        _ what: String, body: Data, saying: String, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        fixture.server.on("PROPFIND", drive, .answer(207, headers: [("Content-Type", "application/xml")], body: body))
        let provider = try fixture.provider()
        let error = await folioError({ try await self.fixture.listDrive(provider) }, file: file, line: line)
        guard case .providerFailure(let message, _)? = error else {
            return XCTFail("\(what): \(String(describing: error))", file: file, line: line)
        }
        XCTAssertTrue(message.contains(saying), "\(what): \(message)", file: file, line: line)
        XCTAssertEqual(fixture.server.count("PROPFIND", drive), 1, "\(what): never retried", file: file, line: line)
        // Nothing of the listing was taken: the good member is unknown, and asking for it asks the server nothing.
        let before = fixture.server.count()
        let unknown = await folioError({ try await provider.item(ItemID("dav:good.txt"), in: .drive) })
        guard case .notFound? = unknown else {
            return XCTFail("\(what): good.txt is known: \(String(describing: unknown))", file: file, line: line)
        }
        XCTAssertEqual(fixture.server.count(), before, what, file: file, line: line)
    }

    func testMalformedXMLIsAClearErrorAndMakesNothing() async throws {
        let mismatched = MultistatusBody.document([good, "<D:response><D:href>/x</D:propstat></D:response>"])
        try await assertListingRefused("mismatched", body: mismatched, saying: "not a multistatus")
    }

    func testContentAfterTheEndOfTheMultistatusIsAClearErrorAndMakesNothing() async throws {
        // Two replies run together (a proxy's error page after the document, say): not one document.
        let body = MultistatusBody.document([good]) + Data("<D:response><D:href>/x</D:propstat>".utf8)
        try await assertListingRefused("after the end", body: body, saying: "not a multistatus")
    }

    func testTruncatedXMLIsAClearErrorAndMakesNothing() async throws {
        let whole = MultistatusBody.listing(drive, [good, MultistatusBody.response(drive + "second.txt", length: 1)])
        try await assertListingRefused("truncated", body: whole.prefix(whole.count - 40), saying: "not a multistatus")
    }

    func testAnEntityBombIsRefusedUnexpanded() async throws {
        var entities = #"<!ENTITY a0 "aaaaaaaaaa">"#
        for level in 1...9 {
            entities += "<!ENTITY a\(level) \"" + String(repeating: "&a\(level - 1);", count: 10) + "\">"
        }
        let body = Data(("<?xml version=\"1.0\"?><!DOCTYPE D:multistatus [\(entities)]>"
            + "<D:multistatus xmlns:D=\"DAV:\">\(good)<D:response><D:href>\(drive)&a9;</D:href>"
            + "</D:response></D:multistatus>").utf8)
        try await assertListingRefused("entity bomb", body: body, saying: "document type")
    }

    func testADocumentTypeInAnotherEncodingIsRefusedToo() async throws {
        // In UTF-16 `<!DOCTYPE` is not the ASCII bytes a scan looks for; the parser would still read it.
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><!DOCTYPE m [<!ENTITY x \"expanded\">]>"
            + "<D:multistatus xmlns:D=\"DAV:\">\(good)<D:response><D:href>\(drive)&x;</D:href>"
            + "<D:propstat><D:prop><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"
            + "</D:response></D:multistatus>"
        var utf16 = Data([0xFF, 0xFE])
        for unit in text.utf16 { utf16.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        try await assertListingRefused("UTF-16", body: utf16, saying: "PROPFIND reply")
        await fixture.stop()
        fixture = try FaultFixture()
        let utf7 = "<?xml version=\"1.0\" encoding=\"UTF-7\"?>"
            + "+ADw-!DOCTYPE m +AFs-+ADw-!ENTITY x +ACI-e+ACI-+AD4-+AF0-+AD4-"
            + "<D:multistatus xmlns:D=\"DAV:\">\(good)</D:multistatus>"
        try await assertListingRefused("UTF-7", body: Data(utf7.utf8), saying: "PROPFIND reply")
    }

    func testAnHrefOnAnotherHostIsRefused() async throws {
        let body = MultistatusBody.listing(drive, [good, MultistatusBody.response("http://evil.example" + drive + "x")])
        try await assertListingRefused("another host", body: body, saying: "another server")
    }

    func testAnHrefOnAnotherPortOfThisHostIsRefused() async throws {
        let other = "http://127.0.0.1:\(fixture.server.baseURL.port! == 1 ? 2 : 1)" + drive + "x"
        let body = MultistatusBody.listing(drive, [good, MultistatusBody.response(other)])
        try await assertListingRefused("another port", body: body, saying: "another server")
    }

    func testHrefsWithDotDotAreRefused() async throws {
        for href in [drive + "..", drive + "%2e%2E/", drive + "sub/../../escaped", FaultFixture.base + "../etc/x"] {
            let body = MultistatusBody.listing(drive, [good, MultistatusBody.response(href)])
            try await assertListingRefused(href, body: body, saying: "the server named")
            await fixture.stop()
            fixture = try FaultFixture()
        }
    }

    func testAnEncodedSlashInANameIsRefused() async throws {
        let body = MultistatusBody.listing(drive, [good, MultistatusBody.response(drive + "a%2Fb.txt")])
        try await assertListingRefused("%2F", body: body, saying: "cannot be a name")
    }

    func testAnEncodedSlashInTheCollectionsPathIsNotTakenForTheCollection() async throws {
        // `/dav%2Fcom.folio.drive/x` is a member of the collection named `dav/com.folio.drive`, not of `/dav/…/`.
        let other = "/dav%2F" + ContainerID.drive.rawValue + "/x.txt"
        let body = MultistatusBody.listing(drive, [good, MultistatusBody.response(other, length: 1)])
        try await assertListingRefused("%2F in the parent", body: body, saying: "not one of its members")
    }

    func testAnEmptyHrefIsRefused() async throws {
        let body = MultistatusBody.listing(drive, [good, MultistatusBody.response("")])
        try await assertListingRefused("empty href", body: body, saying: "without its href")
    }

    func testTwoHrefsOfOneNameAreAClearErrorNotTwoItemsOfOneName() async throws {
        // `a%20b.txt` and `a b.txt` are one name encoded two ways: two items of one name in a folder cannot be.
        let body = MultistatusBody.listing(drive, [
            good, MultistatusBody.response(drive + "a%20b.txt", etag: "\"1\"", length: 1),
            MultistatusBody.response(drive + "a b.txt", etag: "\"2\"", length: 2),
        ])
        try await assertListingRefused("one name twice", body: body, saying: "names one resource twice")
    }

    func testAnItemLookupAnsweredForAnotherResourceIsAClearError() async throws {
        fixture.server.on("PROPFIND", drive, .answer(207, body: MultistatusBody.listing(drive, [good])))
        // Asked for good.txt, the server answers with the properties of another file.
        let other = MultistatusBody.response(drive + "other.bin", etag: "\"o1\"", length: 999)
        fixture.server.on("PROPFIND", drive + "good.txt", .answer(207, body: MultistatusBody.document([other])))
        let provider = try fixture.provider()
        let listed = try await fixture.listDrive(provider)
        let id = try XCTUnwrap(listed.first?.id)
        let error = await folioError { try await provider.item(id, in: .drive) }
        guard case .providerFailure? = error else { return XCTFail("\(String(describing: error))") }
    }

    func testAWeakAndAnUnquotedETagAreTakenAndFetched() async throws {
        let weak = Data("weak content".utf8)
        let unquoted = Data("unquoted content".utf8)
        fixture.server.on("PROPFIND", drive, .answer(207, body: MultistatusBody.listing(drive, [
            MultistatusBody.response(drive + "weak.txt", etag: #"W/"w-1""#, length: weak.count),
            MultistatusBody.response(drive + "unquoted.txt", etag: "u-1", length: unquoted.count),
        ])))
        // Apache's weak tag turns strong a second later; wsgidav quotes the tag of a GET's reply.
        fixture.server.on("GET", drive + "weak.txt", .content(weak, etag: #""w-1""#))
        fixture.server.on("GET", drive + "unquoted.txt", .content(unquoted, etag: #""u-1""#))
        let provider = try fixture.provider()
        let items = try await fixture.listDrive(provider)
        XCTAssertEqual(items.map(\.name), ["unquoted.txt", "weak.txt"])
        let byName = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0) })
        let weakItem = try XCTUnwrap(byName["weak.txt"])
        let unquotedItem = try XCTUnwrap(byName["unquoted.txt"])
        XCTAssertEqual(weakItem.version, #""w-1""#, "a weak tag is taken as its strong form (Apache's turns strong)")
        XCTAssertEqual(unquotedItem.version, #""u-1""#, "quoted, as If-Match takes it")
        for (item, content) in [(weakItem, weak), (unquotedItem, unquoted)] {
            let destination = fixture.state.appendingPathComponent("fetched-\(item.name)")
            _ = try await provider.fetchContents(
                of: item.id, in: .drive, version: item.version, range: 0..<item.size,
                to: .init(destination.path), progress: { _ in })
            XCTAssertEqual(try Data(contentsOf: destination), content, item.name)
        }
        for name in ["weak.txt", "unquoted.txt"] {
            let get = try XCTUnwrap(fixture.server.requests("GET", drive + name).first)
            XCTAssertNil(get.header("if-match"), "\(name): the answer's tag is compared instead")
        }
    }
}
