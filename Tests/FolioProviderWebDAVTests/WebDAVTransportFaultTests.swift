import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// Issue 15, faults on the way: a 2 GB `PROPFIND` body is cut off at the client's limit with memory kept small;
/// redirects to another host are never followed; a server that never answers, or that drops the connection, or
/// that cannot be reached at all is `.offline` after the request's time-out and the client's own attempts.
final class WebDAVTransportFaultTests: XCTestCase {
    private var fixture: FaultFixture!
    private var other: MisbehavingServer?

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws {
        other?.stop()
        await fixture?.stop()
    }

    private var drive: String { FaultFixture.drive }
    private var server: MisbehavingServer { fixture.server }

    func testA2GBPropfindBodyIsCutOffAtTheLimitAndMemoryStaysSmall() async throws {
        server.on("PROPFIND", drive, .stream(207, headers: [("Content-Type", "application/xml")], length: 2 << 30))
        let provider = try fixture.provider()
        let baseline = try ResidentMemory.resetPeak()
        let error = await folioError { try await self.fixture.listDrive(provider) }
        let growth = try ResidentMemory.peak() - baseline
        guard case .providerFailure(let message, retryable: false)? = error else {
            return XCTFail("\(String(describing: error))")
        }
        XCTAssertTrue(message.contains("longer than"), message)
        XCTAssertLessThan(growth, 200 << 20, "the peak resident size grew by \(growth >> 20) MiB")
        XCTAssertEqual(server.count("PROPFIND", drive), 1)
    }

    func testAnEndlessChunkedPropfindBodyIsCutOffAtTheLimitAndMemoryStaysSmall() async throws {
        server.on("PROPFIND", drive, .stream(207, length: nil))
        let provider = try fixture.provider()
        let baseline = try ResidentMemory.resetPeak()
        let error = await folioError { try await self.fixture.listDrive(provider) }
        let growth = try ResidentMemory.peak() - baseline
        guard case .providerFailure(let message, retryable: false)? = error else {
            return XCTFail("\(String(describing: error))")
        }
        XCTAssertTrue(message.contains("longer than"), message)
        XCTAssertLessThan(growth, 200 << 20, "the peak resident size grew by \(growth >> 20) MiB")
    }

    func testRedirectsToAnotherHostAreNotFollowed() async throws {
        let other = try MisbehavingServer()
        self.other = other
        let elsewhere = other.baseURL.absoluteString + drive
        other.on("PROPFIND", drive, .answer(207, body: MultistatusBody.listing(drive, [])))
        other.on("GET", drive + "f.txt", .content(Data("stolen".utf8)))
        other.on("PUT", drive + "f.txt", .answer(201))
        let provider = try fixture.provider()
        for status in [301, 302, 307, 308] {
            server.on("PROPFIND", drive, .answer(status, headers: [("Location", elsewhere)]))
            let error = await folioError { try await self.fixture.listDrive(provider) }
            guard case .providerFailure(let message, retryable: false)? = error else {
                return XCTFail("\(status): \(String(describing: error))")
            }
            XCTAssertTrue(message.contains("redirects are not followed"), message)
        }
        server.on("PUT", drive + "f.txt", .answer(307, headers: [("Location", elsewhere + "f.txt")]))
        let put = try await provider.client.send("PUT", drive + "f.txt", body: .bytes(Data("secret".utf8)))
        XCTAssertEqual(put.status, 307)
        server.on("GET", drive + "f.txt", .answer(302, headers: [("Location", elsewhere + "f.txt")]))
        let destination = fixture.state.appendingPathComponent("f")
        let (get, written) = try await provider.client.download(
            drive + "f.txt", headers: [], range: nil, to: .init(destination.path), progress: { _ in })
        XCTAssertEqual(get.status, 302)
        XCTAssertEqual(written, 0)
        XCTAssertEqual(other.count(), 0, "the other server was never asked")
    }

    func testAServerThatNeverAnswersTimesOutAndIsOffline() async throws {
        server.on("PROPFIND", drive, .never)
        let provider = try fixture.provider(requestTimeout: .seconds(1), attempts: 2)
        let error = await folioError { try await self.fixture.listDrive(provider) }
        guard case .offline? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(server.count("PROPFIND", drive), 2, "a read-only request is tried again")
    }

    func testABodyTrickledWithoutEndTimesOutAndIsOffline() async throws {
        // Each byte comes well within the read time-out: only a limit on the whole answer ends it.
        server.on("PROPFIND", drive, .trickle(207, every: .milliseconds(100)))
        let provider = try fixture.provider(requestTimeout: .seconds(1), attempts: 1)
        let outcome = await within(.seconds(30)) { () -> String in
            do {
                return "listed \(try await provider.enumerateFolder(nil, in: .drive, from: nil, pageSize: 100))"
            } catch FolioError.offline {
                return "offline"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(outcome, "offline", "the listing never ended")
    }

    func testASubSecondTimeOutIsKept() async throws {
        let empty = MultistatusBody.listing(drive, [])
        server.on("PROPFIND", drive, .delayed(.milliseconds(50), .answer(207, body: empty)))
        let provider = try fixture.provider(requestTimeout: .milliseconds(900), attempts: 1)
        let items = try await fixture.listDrive(provider)
        XCTAssertEqual(items, [])
    }

    func testAConnectionCutInAListingIsTriedAgainThenOffline() async throws {
        let whole = MultistatusBody.listing(drive, [MultistatusBody.response(drive + "a.txt", etag: "\"1\"")])
        server.on("PROPFIND", drive, .cut(207, body: whole, after: whole.count / 2))
        let provider = try fixture.provider(attempts: 2)
        let error = await folioError { try await self.fixture.listDrive(provider) }
        guard case .offline? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(server.count("PROPFIND", drive), 2)
        server.on("PROPFIND", drive, .cut(207, body: whole, after: whole.count / 2), .answer(207, body: whole))
        let before = server.count("PROPFIND", drive)
        let items = try await fixture.listDrive(provider)
        XCTAssertEqual(items.map(\.name), ["a.txt"])
        XCTAssertEqual(server.count("PROPFIND", drive) - before, 1, "the script's last reply repeats")
    }

    func testAServerThatCannotBeReachedIsOffline() async throws {
        let provider = try fixture.provider(requestTimeout: .seconds(5), attempts: 2)
        server.stop()
        let error = await folioError { try await self.fixture.listDrive(provider) }
        guard case .offline(let message)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message.contains("cannot be reached"), message)
        let put = await folioError {
            try await provider.client.send("PUT", self.drive + "x", body: .bytes(Data("x".utf8)))
        }
        guard case .offline? = put else { return XCTFail("\(String(describing: put))") }
    }
}
