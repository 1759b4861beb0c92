import FolioCore
import FolioProviderWebDAV
import XCTest

/// Bad settings for a WebDAV remote are refused with a clear error before anything is sent.
final class WebDAVConfigurationTests: XCTestCase {
    private func refusal(_ make: () throws(FolioError) -> WebDAVConfiguration) -> String? {
        do {
            _ = try make()
            return nil
        } catch {
            guard case .invalidArgument(let why) = error else { return "not invalidArgument: \(error)" }
            return why
        }
    }

    func testAnAddressIsAnHTTPCollectionAndGainsItsSlash() throws {
        let configuration = try WebDAVConfiguration(url: "https://dav.example.org/remote.php/dav/files/ann")
        XCTAssertEqual(configuration.baseURL.absoluteString, "https://dav.example.org/remote.php/dav/files/ann/")
        XCTAssertEqual(configuration.basePath, "/remote.php/dav/files/ann/")
        for bad in ["ftp://example.org/", "example.org/dav", "https:///nohost", "not a url at all"] {
            XCTAssertTrue(refusal { () throws(FolioError) in try WebDAVConfiguration(url: bad) }?.contains("http") ?? false, bad)
        }
        XCTAssertTrue(refusal { () throws(FolioError) in try WebDAVConfiguration(url: "https://h/dav/?x=1") }?
            .contains("without a query") ?? false)
        XCTAssertTrue(refusal { () throws(FolioError) in try WebDAVConfiguration(url: "https://ann:secret@h/dav/") }?
            .contains("--password-file") ?? false, "credentials never in the address (they would show in ps)")
    }

    func testAPasswordNeverCrossesTheNetworkInClearText() throws {
        let refused = refusal { () throws(FolioError) in
            try WebDAVConfiguration(url: "http://dav.example.org/dav/", user: "ann", password: "secret")
        }
        XCTAssertTrue(refused?.contains("clear text") ?? false, refused ?? "accepted")
        XCTAssertTrue(refused?.contains("--insecure") ?? false, "says how to allow it")
        XCTAssertNoThrow(try WebDAVConfiguration(
            url: "http://dav.example.org/dav/", user: "ann", password: "secret", insecure: true))
        for loopback in ["http://127.0.0.1:8080/dav/", "http://localhost/dav/", "http://[::1]:8080/dav/"] {
            XCTAssertNoThrow(try WebDAVConfiguration(url: loopback, user: "ann", password: "secret"), loopback)
        }
        XCTAssertNoThrow(try WebDAVConfiguration(url: "https://dav.example.org/dav/", user: "ann", password: "secret"))
        XCTAssertNotNil(refusal { () throws(FolioError) in
            try WebDAVConfiguration(url: "https://dav.example.org/dav/", password: "secret")
        }, "a password without a user")
    }

    func testACertificateAuthorityIsForHTTPS() throws {
        XCTAssertTrue(refusal { () throws(FolioError) in
            try WebDAVConfiguration(url: "http://127.0.0.1/dav/", caFile: "/etc/ssl/certs/ca-certificates.crt")
        }?.contains("https") ?? false)
        let unreadable = try WebDAVConfiguration(url: "https://127.0.0.1/dav/", caFile: "/nonexistent/ca.pem")
        XCTAssertThrowsError(try WebDAVClient(configuration: unreadable)) { error in
            XCTAssertTrue("\(error)".contains("cannot be read"), "\(error)")
        }
    }
}
