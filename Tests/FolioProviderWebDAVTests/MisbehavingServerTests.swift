import FolioTestServers
import Foundation
import XCTest

/// The misbehaving server does what it is scripted to, as an independent client (curl) sees it.
final class MisbehavingServerTests: XCTestCase {
    private var server: MisbehavingServer!
    private var scratch: String!

    override func setUpWithError() throws {
        server = try MisbehavingServer()
        scratch = NSTemporaryDirectory() + "folio-misbehaving-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        server?.stop()
        if let scratch { try? FileManager.default.removeItem(atPath: scratch) }
    }

    private func request(_ method: String, _ path: String, headers: [String] = []) throws -> Curl.Reply {
        var curl = Curl(scratch: scratch)
        curl.maxTime = 10
        return try curl.request(method, server.baseURL.absoluteString + path, headers: headers)
    }

    func testScriptedRepliesComeInOrderTheLastRepeatsAndRequestsAreCounted() throws {
        server.on("GET", "/a", .answer(503, headers: [("Retry-After", "1")]), .answer(200, body: Data("ok".utf8)))
        let first = try request("GET", "/a")
        XCTAssertEqual(first.status, 503)
        XCTAssertEqual(first.headers["retry-after"], "1")
        XCTAssertEqual(try request("GET", "/a").text, "ok")
        XCTAssertEqual(try request("GET", "/a").text, "ok")
        XCTAssertEqual(try request("PUT", "/a").status, 501, "not scripted")
        XCTAssertEqual(server.count("GET", "/a"), 3)
        XCTAssertEqual(server.count(), 4)
        XCTAssertEqual(server.connections, 4, "curl makes one connection per run")
    }

    func testAStreamOfNBytesAFileByRangeAndACutConnection() throws {
        server.on("GET", "/stream", .stream(200, length: 200_000, byte: UInt8(ascii: "x")))
        let streamed = try request("GET", "/stream")
        XCTAssertEqual(streamed.body, Data(repeating: UInt8(ascii: "x"), count: 200_000))

        let file = Data((0..<1000).map { UInt8($0 % 251) })
        server.on("GET", "/file", .content(file, etag: "\"e1\""))
        let ranged = try request("GET", "/file", headers: ["Range: bytes=100-199"])
        XCTAssertEqual(ranged.status, 206)
        XCTAssertEqual(ranged.headers["content-range"], "bytes 100-199/1000")
        XCTAssertEqual(ranged.body, file.subdata(in: 100..<200))
        XCTAssertEqual(server.requests("GET", "/file").first?.header("range"), "bytes=100-199")

        server.on("GET", "/cut", .content(file, cutAfter: 300))
        let cut = try request("GET", "/cut")
        XCTAssertNotEqual(cut.exitCode, 0, "curl sees the body end early")
        XCTAssertEqual(cut.body, file.prefix(300))
    }

    func testAServerThatNeverAnswersKeepsTheClientWaitingUntilItGivesUp() throws {
        server.on("GET", "/never", .never)
        server.on("GET", "/late", .delayed(.milliseconds(200), .answer(204)))
        var curl = Curl(scratch: scratch)
        curl.maxTime = 1
        XCTAssertEqual(try curl.request("GET", server.baseURL.absoluteString + "/never").status, 0)
        XCTAssertEqual(try request("GET", "/late").status, 204)
        XCTAssertEqual(server.count("GET", "/never"), 1)
    }
}
