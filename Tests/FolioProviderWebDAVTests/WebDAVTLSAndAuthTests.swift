import FolioCore
import FolioProviderWebDAV
import FolioTestServers
import FolioTesting
import Foundation
import XCTest

/// The provider over `https` with a certificate made for the test (trusted through `--ca-file` only), and over
/// Basic authentication: what works, and the clear errors when the certificate or the password is wrong.
final class WebDAVTLSAndAuthTests: XCTestCase {
    private var servers: [ApacheServer] = []
    private var state: URL!

    override func setUpWithError() throws {
        state = FileManager.default.temporaryDirectory.appendingPathComponent("folio-webdav-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        servers.forEach { $0.stop() }
        try? FileManager.default.removeItem(at: state)
    }

    private func start(_ server: ApacheServer) -> ApacheServer {
        servers.append(server)
        return server
    }

    func testHTTPSWithTheServersCertificateWorksAndWithoutItFailsClearly() async throws {
        let server = start(try startOrSkip { try ApacheServer(tls: true) })
        XCTAssertEqual(try server.request("MKCOL", "/dav/").status, 201)
        let url = server.baseURL.absoluteString + "/dav/"
        let caFile = try XCTUnwrap(server.caFile)
        let trusting = try WebDAVProvider(
            configuration: WebDAVConfiguration(url: url, caFile: caFile), stateFolder: state)
        let containers = try await trusting.listContainers()
        XCTAssertEqual(containers.map(\.id), [.drive], "the Drive is made over https")
        let suite = ProviderConformance(
            options: .init(container: .drive),
            makeProvider: { [state] in
                try WebDAVProvider(configuration: WebDAVConfiguration(url: url, caFile: caFile), stateFolder: state)
            })
        for check in [ProviderConformance.Check.createAndEnumerate, .fetchReturnsExactBytes, .staleModifyConflicts] {
            let outcome = try await suite.run(check)
            XCTAssertEqual(outcome, .passed, "\(check) over https")
        }
        await trusting.shutdown()

        let distrusting = try WebDAVProvider(configuration: WebDAVConfiguration(url: url), stateFolder: nil)
        do {
            _ = try await distrusting.listContainers()
            XCTFail("a certificate nobody vouched for was trusted")
        } catch let error as FolioError {
            guard case .providerFailure(let why, let retryable) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(why.contains("TLS") && why.contains("--ca-file"), why)
            XCTAssertFalse(retryable, "a certificate that is not trusted needs the user")
        }
        await distrusting.shutdown()
    }

    func testBasicAuthWorksWithThePasswordAndAWrongOneSaysAuthenticationFailed() async throws {
        let server = start(try startOrSkip { try ApacheServer(basicAuth: (user: "ann", password: "right horse")) })
        XCTAssertEqual(try server.request("MKCOL", "/dav/").status, 201)
        let url = server.baseURL.absoluteString + "/dav/"
        let provider = try WebDAVProvider(
            configuration: WebDAVConfiguration(url: url, user: "ann", password: "right horse"), stateFolder: state)
        let containers = try await provider.listContainers()
        XCTAssertEqual(containers.map(\.id), [.drive])
        await provider.shutdown()

        let wrong = try WebDAVProvider(
            configuration: WebDAVConfiguration(url: url, user: "ann", password: "wrong"), stateFolder: nil)
        do {
            _ = try await wrong.listContainers()
            XCTFail("a wrong password was let in")
        } catch let error as FolioError {
            guard case .accessDenied(let why) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(why.contains("authentication failed"), why)
            XCTAssertTrue(UploadFailure(error).needsUser, "never retried forever")
        }
        await wrong.shutdown()
    }
}
