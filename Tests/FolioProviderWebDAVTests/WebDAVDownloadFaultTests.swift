import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// Issue 15, faults in downloads: a connection cut mid-`GET` is resumed from where it stopped (a second `GET` whose
/// `Range` starts after the bytes already written) and the file is exact; a server that ignores `Range` (a `200`
/// with the whole body) still has the right bytes written at the right offsets; a `206` of another range than the
/// one asked for is refused; a server that cuts every answer before any byte makes the fetch give up, offline.
final class WebDAVDownloadFaultTests: XCTestCase {
    private var fixture: FaultFixture!
    private let content = Data((0..<300_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })
    private let tag = #""b1""#

    override func setUpWithError() throws { fixture = try FaultFixture() }

    override func tearDown() async throws { await fixture?.stop() }

    private var file: String { FaultFixture.drive + "big.bin" }
    private var server: MisbehavingServer { fixture.server }

    /// A provider that has listed the Drive, where `big.bin` (``content``, ETag ``tag``) is; and that item.
    private func listed() async throws -> (WebDAVProvider, RemoteItem) {
        let member = MultistatusBody.response(file, etag: tag, length: content.count)
        let listing = MultistatusBody.listing(FaultFixture.drive, [member])
        server.on("PROPFIND", FaultFixture.drive, .answer(207, body: listing))
        server.on("PROPFIND", file, .answer(207, body: MultistatusBody.document([member])))
        let provider = try fixture.provider()
        let items = try await fixture.listDrive(provider)
        let item = try XCTUnwrap(items.first)
        XCTAssertEqual(item.size, Int64(content.count))
        return (provider, item)
    }

    private var destination: URL { fixture.state.appendingPathComponent("fetched") }

    /// The first byte the `Range` header of `request` asks for.
    private func rangeStart(_ request: MisbehavingServer.Request?) -> Int? {
        guard let range = request?.header("range") else { return nil }
        return MisbehavingHandler.byteRange(range, size: content.count)?.lowerBound
    }

    func testAConnectionCutMidGetResumesFromWhereItStopped() async throws {
        let cut = 100_000
        server.on("GET", file, .content(content, etag: tag, cutAfter: cut), .content(content, etag: tag))
        let (provider, item) = try await listed()
        _ = try await provider.fetchContents(
            of: item.id, in: .drive, version: item.version, to: .init(destination.path), progress: { _ in })
        XCTAssertEqual(try Data(contentsOf: destination), content)
        let gets = server.requests("GET", file)
        XCTAssertEqual(gets.count, 2)
        XCTAssertEqual(rangeStart(gets.first), 0)
        let resumedAt = try XCTUnwrap(rangeStart(gets.last), "the second GET asks for a range")
        XCTAssertGreaterThan(resumedAt, 0, "it goes on from the bytes already written")
        XCTAssertLessThanOrEqual(resumedAt, cut)
    }

    /// The rest of a cut download must be of the version the fetch started with: the answer's ETag is compared
    /// (not `If-Match`, which Apache's weak tags never satisfy), and another version is a conflict — found before
    /// any of its bytes is written or reported as fetched, so a reader of the version never sees one of them.
    func testTheRestOfACutDownloadFromAnotherVersionIsAConflict() async throws {
        let cut = 100_000
        let other = Data(content.map { ~$0 })
        server.on("GET", file, .content(content, etag: tag, cutAfter: cut), .content(other, etag: "\"b2\""))
        let (provider, item) = try await listed()
        let reported = Counter()
        let error = await folioError {
            _ = try await provider.fetchContents(
                of: item.id, in: .drive, version: item.version, to: .init(destination.path),
                progress: { reported.raise(to: $0) })
        }
        guard case .conflict? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(server.count("GET", file), 2)
        let written = try Data(contentsOf: destination)
        XCTAssertLessThanOrEqual(written.count, cut, "no byte of the other version was written")
        XCTAssertEqual(written, content.prefix(written.count))
        XCTAssertLessThanOrEqual(reported.value, Int64(written.count), "progress never counts the other version")
    }

    func testAServerThatIgnoresRangeStillGetsTheRightBytesWritten() async throws {
        server.on("GET", file, .content(content, etag: tag, honoursRange: false))
        let (provider, item) = try await listed()
        _ = try await provider.fetchContents(
            of: item.id, in: .drive, version: item.version, range: 1000..<5000, to: .init(destination.path),
            progress: { _ in })
        let written = try Data(contentsOf: destination)
        XCTAssertEqual(written.count, 5000, "nothing past the range")
        XCTAssertEqual(written.subdata(in: 1000..<5000), content.subdata(in: 1000..<5000))
        XCTAssertEqual(written.prefix(1000), Data(count: 1000), "nothing before it")
    }

    func testACutThenAServerThatIgnoresRangeStillMakesTheExactFile() async throws {
        server.on(
            "GET", file, .content(content, etag: tag, honoursRange: false, cutAfter: 120_000),
            .content(content, etag: tag, honoursRange: false))
        let (provider, item) = try await listed()
        _ = try await provider.fetchContents(
            of: item.id, in: .drive, version: item.version, to: .init(destination.path), progress: { _ in })
        XCTAssertEqual(try Data(contentsOf: destination), content)
        XCTAssertEqual(server.count("GET", file), 2)
    }

    func testAGetThatSendsFarMoreThanTheFileHoldsWritesOnlyTheFile() async throws {
        // The listing says 300,000 bytes; the server streams 2 GB (never built in memory on either side).
        server.on("GET", file, .stream(200, headers: [("ETag", tag)], length: 2 << 30, byte: 7))
        let (provider, item) = try await listed()
        _ = try await provider.fetchContents(
            of: item.id, in: .drive, version: item.version, to: .init(destination.path), progress: { _ in })
        XCTAssertEqual(try Data(contentsOf: destination), Data(repeating: 7, count: content.count))
    }

    func testAPartialAnswerOfAnotherRangeIsRefused() async throws {
        server.on("GET", file, .answer(206, headers: [("Content-Range", "bytes 0-9/300000"), ("ETag", tag)],
            body: content.prefix(10)))
        let (provider, item) = try await listed()
        let error = await folioError {
            try await provider.fetchContents(
                of: item.id, in: .drive, version: item.version, range: 1000..<1010, to: .init(self.destination.path),
                progress: { _ in })
        }
        guard case .providerFailure(let message, _)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message.contains("another range"), message)
    }

    func testAServerThatCutsEveryAnswerBeforeAnyByteMakesTheFetchGiveUpOffline() async throws {
        server.on("GET", file, .content(content, etag: tag, cutAfter: 0))
        let (provider, item) = try await listed()
        let error = await folioError {
            try await provider.fetchContents(
                of: item.id, in: .drive, version: item.version, to: .init(self.destination.path), progress: { _ in })
        }
        guard case .offline? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(server.count("GET", file), 3)
    }
}

/// The highest progress a fetch reported, from any thread.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var highest: Int64 = 0

    /// The highest value seen so far.
    var value: Int64 { lock.withLock { highest } }

    /// Records `value` if it is the highest yet.
    func raise(to value: Int64) { lock.withLock { highest = max(highest, value) } }
}
