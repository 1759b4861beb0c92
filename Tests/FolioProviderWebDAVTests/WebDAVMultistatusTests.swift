import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// Issue 15: PROPFIND replies read with a real XML parser, in the prefix styles real servers send, and every kind
/// of bad reply a clear error. (The bodies below follow what Apache mod_dav, rclone and wsgidav send: Apache's
/// `lp1:` prefixes and weak ETags, rclone's default namespace, wsgidav's unquoted ETags.)
final class WebDAVMultistatusTests: XCTestCase {
    private let base = URL(string: "http://127.0.0.1:8080/dav/Drive/")!

    func testApacheStylePrefixesAndAMissingPropertyAreRead() throws {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:" xmlns:ns0="DAV:">
            <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
            <D:href>/dav/Drive/</D:href>
            <D:propstat><D:prop><lp1:resourcetype><D:collection/></lp1:resourcetype>
            <lp1:getlastmodified>Thu, 26 Nov 2026 06:00:00 GMT</lp1:getlastmodified>
            <lp1:getetag>"1000-5f0e"</lp1:getetag></D:prop>
            <D:status>HTTP/1.1 200 OK</D:status></D:propstat>
            </D:response>
            <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
            <D:href>/dav/Drive/a%20letter.txt</D:href>
            <D:propstat><D:prop><lp1:resourcetype/><lp1:getcontentlength>12</lp1:getcontentlength>
            <lp1:getlastmodified>Thu, 26 Nov 2026 06:01:02 GMT</lp1:getlastmodified>
            <lp1:getetag>W/"c-5f0f"</lp1:getetag><lp2:executable>F</lp2:executable></D:prop>
            <D:status>HTTP/1.1 200 OK</D:status></D:propstat>
            <D:propstat><D:prop><D:displayname/></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>
            </D:response>
            </D:multistatus>
            """
        let parsed = try WebDAVMultistatus.parse(Data(body.utf8))
        XCTAssertEqual(parsed.responses.count, 2)
        let folder = parsed.responses[0]
        XCTAssertTrue(folder.properties.isCollection)
        XCTAssertEqual(try WebDAVHref(folder.href, listing: base), .collection)
        let file = parsed.responses[1]
        XCTAssertFalse(file.properties.isCollection)
        XCTAssertEqual(file.properties.contentLength, 12)
        XCTAssertEqual(file.properties.entityTag, #"W/"c-5f0f""#)
        XCTAssertNil(file.properties.displayName, "a property with a 404 status is absent")
        XCTAssertEqual(file.properties.lastModified, Date(timeIntervalSince1970: 1_795_672_862))
        XCTAssertEqual(try WebDAVHref(file.href, listing: base), .member("a letter.txt"))
    }

    func testADefaultNamespaceAndUnquotedETagsAndFullURLsAreRead() throws {
        let body = """
            <?xml version="1.0"?><multistatus xmlns="DAV:"><response>
            <href>http://127.0.0.1:8080/dav/Drive/Sub%20Folder/</href>
            <propstat><prop><resourcetype><collection xmlns="DAV:"/></resourcetype><getetag>abc123</getetag>
            <displayname>Sub Folder</displayname></prop><status>HTTP/1.1 200 OK</status></propstat>
            </response></multistatus>
            """
        let response = try XCTUnwrap(WebDAVMultistatus.parse(Data(body.utf8)).responses.first)
        XCTAssertTrue(response.properties.isCollection)
        XCTAssertEqual(response.properties.entityTag, "abc123")
        XCTAssertEqual(response.properties.displayName, "Sub Folder")
        XCTAssertEqual(try WebDAVHref(response.href, listing: base), .member("Sub Folder"))
    }

    func testAnElementOfAnotherNamespaceNamedLikeADAVPropertyIsNotTakenForIt() throws {
        let body = """
            <m:multistatus xmlns:m="DAV:" xmlns:x="urn:other"><m:response><m:href>/dav/Drive/f</m:href>
            <m:propstat><m:prop><x:getcontentlength>999</x:getcontentlength><x:resourcetype><m:collection/>
            </x:resourcetype></m:prop><m:status>HTTP/1.1 200 OK</m:status></m:propstat></m:response></m:multistatus>
            """
        let response = try XCTUnwrap(WebDAVMultistatus.parse(Data(body.utf8)).responses.first)
        XCTAssertNil(response.properties.contentLength)
        XCTAssertFalse(response.properties.isCollection)
    }

    func testAResponseForAResourceThatIsGoneCarriesItsStatus() throws {
        let body = """
            <D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/Drive/gone.txt</D:href>
            <D:status>HTTP/1.1 404 Not Found</D:status></D:response></D:multistatus>
            """
        let response = try XCTUnwrap(WebDAVMultistatus.parse(Data(body.utf8)).responses.first)
        XCTAssertEqual(response.status, 404)
    }

    func testBadRepliesAreClearErrors() {
        let cases: [(String, String)] = [
            ("truncated", #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/Drive/a</D:href>"#),
            ("not XML", "<html><body>502 Bad Gateway</body>"),
            ("not a multistatus", #"<D:error xmlns:D="DAV:"><D:lock-token-submitted/></D:error>"#),
            ("no href", #"<D:multistatus xmlns:D="DAV:"><D:response><D:status>HTTP/1.1 200 OK</D:status>"#
                + "</D:response></D:multistatus>"),
            ("a size that is not one", #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/Drive/a</D:href>"#
                + "<D:propstat><D:prop><D:getcontentlength>-5</D:getcontentlength></D:prop>"
                + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>"),
            ("entity expansion", """
                <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">
                <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;">]><D:multistatus xmlns:D="DAV:"><D:response>
                <D:href>/dav/Drive/&lol3;</D:href></D:response></D:multistatus>
                """),
            ("an external entity", """
                <?xml version="1.0"?><!doctype m [<!ENTITY x SYSTEM "file:///etc/passwd">]>
                <D:multistatus xmlns:D="DAV:"><D:response><D:href>&x;</D:href></D:response></D:multistatus>
                """),
            ("empty", ""),
            ("an undefined entity", #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/Drive/&x;</D:href>"#
                + "</D:response></D:multistatus>"),
            ("tags that do not match", #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/Drive/a</D:response>"#
                + "</D:href></D:multistatus>"),
            ("a second document after the first", #"<D:multistatus xmlns:D="DAV:"></D:multistatus>"#
                + #"<D:multistatus xmlns:D="DAV:"></D:multistatus>"#),
            ("an unbound prefix", #"<D:multistatus><D:response><D:href>/dav/Drive/a</D:href></D:response>"#
                + "</D:multistatus>"),
            ("a document type after a long comment", "<?xml version=\"1.0\"?><!--" + String(repeating: "x", count: 8000)
                + #"--><!DOCTYPE m [<!ENTITY a "b">]><D:multistatus xmlns:D="DAV:"></D:multistatus>"#),
        ]
        for (what, body) in cases {
            XCTAssertThrowsError(try WebDAVMultistatus.parse(Data(body.utf8)), what) { error in
                guard case FolioError.providerFailure(let message, _) = error else {
                    return XCTFail("\(what): \(error)")
                }
                XCTAssertTrue(message.contains("PROPFIND reply"), "\(what): \(message)")
            }
        }
    }

    func testTheParsersOwnErrorIsInTheMessage() {
        let body = #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/Drive/a</D:response></D:multistatus>"#
        XCTAssertThrowsError(try WebDAVMultistatus.parse(Data(body.utf8))) { error in
            guard case FolioError.providerFailure(let message, retryable: true) = error else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(message.contains("mismatch") && message.contains("line 1"), message)
        }
    }

    func testCharacterReferencesPredefinedEntitiesAndCDATAAreText() throws {
        let body = #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/Drive/a&amp;b%20&#x63;</D:href>"#
            + #"<D:propstat><D:prop><D:displayname><![CDATA[<one> & two]]></D:displayname>"#
            + #"<D:getetag>  "e&lt;1"  </D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"#
            + "</D:response></D:multistatus>"
        let reply = try WebDAVMultistatus.parse(Data(body.utf8))
        XCTAssertEqual(reply.responses.map(\.href), ["/dav/Drive/a&b%20c"])
        XCTAssertEqual(reply.responses.first?.properties.displayName, "<one> & two")
        XCTAssertEqual(reply.responses.first?.properties.entityTag, #""e<1""#)
    }

    func testAReplyOverTheLimitIsRefusedBeforeItIsRead() {
        let body = Data(repeating: UInt8(ascii: " "), count: 4096)
        XCTAssertThrowsError(try WebDAVMultistatus.parse(body, limit: 1024)) { error in
            guard case FolioError.providerFailure(let message, retryable: false) = error else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(message.contains("more than the 1024"), message)
        }
    }

    func testHrefsThatAreNotMembersOfTheListedCollectionAreRefused() {
        let refused = [
            "/dav/Drive/..", "/dav/Drive/%2e%2e", "/dav/Drive/a%2Fb", "/dav/Drive/a%00b", "/dav/Other/a",
            "/dav/Drive/sub/deeper", "http://evil.example/dav/Drive/a", "https://127.0.0.1:8080/dav/Drive/a",
            "/dav/Drive/.", "/dav/Drive//", "/dav/Drive/a//", "/dav/Drive/%zz", "/dav/Drive/%C3",
        ]
        for href in refused {
            XCTAssertThrowsError(try WebDAVHref(href, listing: base), href) { error in
                guard case FolioError.providerFailure = error else { return XCTFail("\(href): \(error)") }
            }
        }
        XCTAssertEqual(try WebDAVHref("/dav/Drive/caf%C3%A9.txt", listing: base), .member("café.txt"))
        XCTAssertEqual(try WebDAVHref("/dav/Drive/with%20space/", listing: base), .member("with space"))
        XCTAssertEqual(try WebDAVHref("/dav/Drive", listing: base), .collection)
        let spaced = URL(string: "http://127.0.0.1:8080/dav/My%20Drive/")!
        XCTAssertEqual(try WebDAVHref("/dav/My%20Drive/", listing: spaced), .collection)
        XCTAssertEqual(try WebDAVHref("/dav/My Drive/", listing: spaced), .collection, "encoded differently")
        XCTAssertThrowsError(try WebDAVHref("/dav/My%20drive/", listing: spaced), "names keep their case")
        XCTAssertEqual(try WebDAVHref("/dav/My Drive/x%41", listing: spaced), .member("xA"))
    }

    /// Two `href`s have one key exactly when they name one resource, whatever their encoding.
    func testTheKeyOfAResourceIsTheSameForEveryEncodingOfItsPath() {
        let hrefs = [
            "/dav/a b", "/dav/a%20b", "/dav/a%20b/", "/dav/a b//", "http://127.0.0.1:8080/dav/a%20b", "/dav/a/b",
            "/dav/a%2Fb", "/dav/a%2fb/", "/dav/", "/dav", "/", "//", "/dav/%C3%A9", "/dav/é", "/dav/x%00", "dav/a b",
        ]
        for one in hrefs {
            for other in hrefs {
                let same = WebDAVHref.resource(one) == WebDAVHref.resource(other)
                XCTAssertEqual(WebDAVHref.resourceKey(one) == WebDAVHref.resourceKey(other), same, "\(one) and \(other)")
            }
        }
        XCTAssertNil(WebDAVHref.resourceKey("/dav/%zz"))
    }

    /// An `href` that spells the collection's path as it was asked for is read by its bytes; one spelled otherwise
    /// by its decoded segments. Both readings give the same answer for every `href`.
    func testAnHrefReadsTheSameWhateverTheSpellingOfTheCollection() {
        let asAsked = WebDAVHref.Listing(URL(string: "http://127.0.0.1:8080/dav/Drive/")!)
        let spelledOtherwise = WebDAVHref.Listing(URL(string: "http://127.0.0.1:8080/dav/%44rive/")!)
        let hrefs = [
            "/dav/Drive/", "/dav/Drive", "/dav/Drive//", "/dav/Drive/a", "/dav/Drive/a/", "/dav/Drive/a//",
            "/dav/Drive/a%20b", "/dav/Drive/caf%C3%A9/", "/dav/Drive/..", "/dav/Drive/%2E", "/dav/Drive/a%2Fb",
            "/dav/Drive/a%00", "/dav/Drive/%", "/dav/Drive/%C3", "/dav/Drive/a/b", "/dav/Drivex/a", "/dav/Other/a",
            "http://127.0.0.1:8080/dav/Drive/a", "http://evil.example/dav/Drive/a", "Drive/a", "",
        ]
        for href in hrefs {
            let quick = Result { () throws(FolioError) in try asAsked.href(href) }
            let general = Result { () throws(FolioError) in try spelledOtherwise.href(href) }
            switch (quick, general) {
            case (.success(let one), .success(let other)): XCTAssertEqual(one, other, href)
            case (.failure, .failure): break
            default: XCTFail("\(href): \(quick) against \(general)")
            }
        }
        XCTAssertEqual(try asAsked.href("/dav/Drive/a%20b"), .member("a b"))
        XCTAssertEqual(try asAsked.href("/dav/Drive/"), .collection)
    }
}

/// The hand-written reader of HTTP dates agrees with a date formatter, and the obsolete forms still read.
final class HTTPDateTests: XCTestCase {
    func testTheUsualFormReadsAsAFormatterReadsIt() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Tue, 29 Feb 2028 23:59:59 GMT", "Thu, 01 Jan 1970 00:00:00 GMT",
                     "Fri, 31 Dec 1999 12:00:01 GMT", "Wed, 01 Mar 2000 00:00:00 GMT", "Sat, 27 Nov 2100 17:05:00 GMT"] {
            XCTAssertEqual(WebDAVProperties.httpDate(text), formatter.date(from: text), text)
        }
        XCTAssertEqual(
            WebDAVProperties.httpDate("Sunday, 06-Nov-94 08:49:37 GMT")?.timeIntervalSince1970, 784_111_777, "RFC 850")
        XCTAssertEqual(WebDAVProperties.httpDate("Sun Nov  6 08:49:37 1994")?.timeIntervalSince1970, 784_111_777, "asctime")
        // Any second of two centuries, as a formatter writes it, reads back to itself.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int.random(in: -2_208_988_800...4_102_444_800, using: &generator)))
            XCTAssertEqual(WebDAVProperties.httpDate(formatter.string(from: date)), date, formatter.string(from: date))
        }
        XCTAssertEqual(WebDAVProperties.httpDate(" Sun, 06 Nov 1994 08:49:37 GMT\n")?.timeIntervalSince1970, 784_111_777)
        XCTAssertEqual(WebDAVProperties.httpDate("Sun, 6 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970, 784_111_777)
        for bad in ["", "yesterday", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
                    "Sun, 06 Now 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:3x GMT"] {
            XCTAssertNil(WebDAVProperties.httpDate(bad), bad)
        }
    }
}
