import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// What ``WebDAVClient`` makes of the errors the transport really raises (got from real connections, never made
/// up): a refused connection was never sent (so even a `PUT` may go again) and is `.offline`; a connection lost
/// mid-answer or an answer that never came may have carried the request; `https` to a server that does not speak
/// TLS is a TLS failure that needs the user.
final class WebDAVClientErrorTests: XCTestCase {
    private var fixture: FaultFixture!

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws { await fixture?.stop() }

    private var server: MisbehavingServer { fixture.server }

    /// The error `execute` of `client` raises for `method` on `path`, body included.
    private func transportError(
        _ client: WebDAVClient, _ method: String, _ path: String, file: StaticString = #filePath, line: UInt = #line
    ) async -> (any Error)? {
        do {
            let response = try await client.execute(method, path, headers: [], body: .none)
            _ = try await response.body.collect(upTo: 1 << 20)
            XCTFail("\(method) \(path) answered \(response.status)", file: file, line: line)
        } catch {
            return error
        }
        return nil
    }

    func testARefusedConnectionWasNeverSentAndIsOffline() async throws {
        let client = try fixture.provider(requestTimeout: .seconds(5), attempts: 1).client
        server.stop()
        let raised = await transportError(client, "PUT", "/dav/x")
        let error = try XCTUnwrap(raised)
        XCTAssertTrue(WebDAVClient.neverSent(error), "\(type(of: error)): \(error)")
        guard case .offline = WebDAVClient.failure(error, method: "PUT") else {
            return XCTFail("\(WebDAVClient.failure(error, method: "PUT"))")
        }
    }

    func testAConnectionLostMidAnswerMayHaveCarriedTheRequest() async throws {
        server.on("PUT", "/dav/x", .cut(200, body: Data(repeating: 1, count: 1000), after: 10))
        let client = try fixture.provider().client
        let raised = await transportError(client, "PUT", "/dav/x")
        let error = try XCTUnwrap(raised)
        XCTAssertFalse(WebDAVClient.neverSent(error), "\(type(of: error)): \(error)")
        guard case .offline = WebDAVClient.failure(error, method: "PUT") else {
            return XCTFail("\(WebDAVClient.failure(error, method: "PUT"))")
        }
        let failure = await folioError { try await client.send("PUT", "/dav/x", body: .bytes(Data("x".utf8))) }
        guard case .offline? = failure else { return XCTFail("\(String(describing: failure))") }
        XCTAssertEqual(server.count("PUT", "/dav/x"), 2, "the PUT of send was not tried again")
    }

    func testAnAnswerThatNeverCameMayHaveCarriedTheRequest() async throws {
        server.on("PUT", "/dav/x", .never)
        let client = try fixture.provider(requestTimeout: .milliseconds(500)).client
        let raised = await transportError(client, "PUT", "/dav/x")
        let error = try XCTUnwrap(raised)
        XCTAssertFalse(WebDAVClient.neverSent(error), "\(type(of: error)): \(error)")
        guard case .offline = WebDAVClient.failure(error, method: "PUT") else {
            return XCTFail("\(WebDAVClient.failure(error, method: "PUT"))")
        }
    }

    func testHTTPSToAServerThatDoesNotSpeakTLSIsATLSFailure() async throws {
        server.on("PROPFIND", "/dav/", .answer(400))
        let https = "https://127.0.0.1:\(server.baseURL.port ?? 0)/dav/"
        let client = try WebDAVClient(configuration: try WebDAVConfiguration(url: https))
        let failure = await folioError { try await client.send("PROPFIND", "/dav/") }
        await client.shutdown()
        guard case .providerFailure(let message, retryable: false)? = failure else {
            return XCTFail("\(String(describing: failure))")
        }
        XCTAssertTrue(message.contains("TLS"), message)
        XCTAssertEqual(server.connections, 1, "a failure that needs the user is not tried again")
        XCTAssertEqual(server.count(), 0)
    }
}
