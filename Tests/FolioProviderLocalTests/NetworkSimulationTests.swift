import FolioCore
import FolioProviderLocal
import Foundation
import XCTest

/// The simulated network: offline, random failures, latency and bandwidth, set at initialization or toggled
/// at run time through `.folio/simulate.json`.
final class NetworkSimulationTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote()
    }

    override func tearDownWithError() throws {
        remote.remove()
    }

    func testOverrideFileTogglesOfflineAtRunTime() async throws {
        let provider = try remote.provider()
        _ = try await provider.listContainers()

        try NetworkSimulation(offline: true).write(toRemoteAt: remote.root)
        await assertThrows("offline", of: provider) { error in
            guard case .offline = error else { return false }
            return error.isRetryable
        }

        try NetworkSimulation(offline: false).write(toRemoteAt: remote.root)
        _ = try await provider.listContainers()

        try NetworkSimulation(offline: true).write(toRemoteAt: remote.root)
        await assertThrows("offline again", of: provider) {
            if case .offline = $0 { return true } else { return false }
        }
        try NetworkSimulation.removeOverride(ofRemoteAt: remote.root)
        _ = try await provider.listContainers()
    }

    func testInitializerSimulationAppliesUntilOverridden() async throws {
        let provider = try remote.provider(NetworkSimulation(offline: true))
        await assertThrows("offline from the initializer", of: provider) {
            if case .offline = $0 { return true } else { return false }
        }
        try NetworkSimulation().write(toRemoteAt: remote.root)
        _ = try await provider.listContainers()
        try NetworkSimulation.removeOverride(ofRemoteAt: remote.root)
        await assertThrows("offline again without the override", of: provider) {
            if case .offline = $0 { return true } else { return false }
        }
    }

    func testFullErrorRateFailsEveryCallRetryablyBeforeDoingAnything() async throws {
        let provider = try remote.provider()
        try NetworkSimulation(errorRate: 1.0).write(toRemoteAt: remote.root)
        for _ in 0..<5 {
            await assertThrows("simulated failure", of: provider) { error in
                guard case .providerFailure = error else { return false }
                return error.isRetryable
            }
        }
        let template = remote.template("never.txt")
        do {
            _ = try await provider.createItem(template, contents: try remote.contentFile("x"))
            XCTFail("a create went through an error rate of 1")
        } catch let error as FolioError {
            XCTAssertTrue(error.isRetryable, "\(error)")
        }
        try NetworkSimulation.removeOverride(ofRemoteAt: remote.root)
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: remote.path("never.txt")), "the failed create did something"
        )
        let items = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(items, [])
    }

    func testTheSameSeedFailsTheSameCalls() async throws {
        let simulation = NetworkSimulation(errorRate: 0.5, seed: 42)
        let first = try await outcomes(of: try remote.provider(simulation), calls: 32)
        let second = try await outcomes(of: try remote.provider(simulation), calls: 32)
        XCTAssertEqual(first, second)
        XCTAssertTrue(first.contains(true) && first.contains(false), "an error rate of 0.5 gave \(first)")
    }

    func testBandwidthPacesFetches() async throws {
        let provider = try remote.provider()
        let bytes = [UInt8](repeating: 0xAB, count: 2 << 20)
        let file = try await provider.createItem(
            remote.template("two-mib.bin"), contents: try remote.contentFile(bytes)
        )

        let slow = try remote.provider(NetworkSimulation(bandwidthBytesPerSecond: 4 << 20))
        let destination = try remote.destination()
        let start = ContinuousClock.now
        _ = try await slow.fetchContents(of: file.id, in: .drive, version: file.version, to: destination) { _ in }
        let elapsed = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(400), "2 MiB at 4 MiB/s took only \(elapsed)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: destination.string)), Data(bytes))
    }

    func testBandwidthPacesUploads() async throws {
        let slow = try remote.provider(NetworkSimulation(bandwidthBytesPerSecond: 4 << 20))
        let start = ContinuousClock.now
        _ = try await slow.createItem(
            remote.template("upload.bin"), contents: try remote.contentFile([UInt8](repeating: 1, count: 2 << 20))
        )
        let elapsed = ContinuousClock.now - start
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(400), "2 MiB at 4 MiB/s took only \(elapsed)")
    }

    func testLatencyDelaysEveryCall() async throws {
        let provider = try remote.provider(NetworkSimulation(latencyMilliseconds: 150))
        let start = ContinuousClock.now
        _ = try await provider.listContainers()
        _ = try await provider.enumerateItems(in: .drive)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(300))
    }

    func testMalformedOverrideIsIgnoredUntilFixed() async throws {
        let provider = try remote.provider()
        let path = NetworkSimulation.overrideFile(ofRemoteAt: remote.root)
        try Data("{\"offline\": tru".utf8).write(to: URL(fileURLWithPath: path.string), options: .atomic)
        _ = try await provider.listContainers()
        try Data("{\"offline\": true}".utf8).write(to: URL(fileURLWithPath: path.string), options: .atomic)
        await assertThrows("offline from a file with only one key", of: provider) {
            if case .offline = $0 { return true } else { return false }
        }
    }

    func testDecodingFillsDefaultsAndClamps() throws {
        let decoded = try JSONDecoder().decode(
            NetworkSimulation.self, from: Data("{\"errorRate\": 3, \"latencyMilliseconds\": -5}".utf8)
        )
        XCTAssertEqual(decoded, NetworkSimulation(errorRate: 1))
        XCTAssertEqual(decoded.latencyMilliseconds, 0)
        XCTAssertEqual(decoded.bandwidthBytesPerSecond, 0)
        XCTAssertFalse(decoded.offline)
        let roundTrip = try JSONDecoder().decode(
            NetworkSimulation.self,
            from: JSONEncoder().encode(NetworkSimulation(latencyMilliseconds: 5, bandwidthBytesPerSecond: 7, seed: 9))
        )
        XCTAssertEqual(roundTrip, NetworkSimulation(latencyMilliseconds: 5, bandwidthBytesPerSecond: 7, seed: 9))
    }

    // MARK: Helpers

    /// Which of `calls` calls to `listContainers` succeeded.
    private func outcomes(of provider: LocalProvider, calls: Int) async throws -> [Bool] {
        var results: [Bool] = []
        for _ in 0..<calls {
            do {
                _ = try await provider.listContainers()
                results.append(true)
            } catch FolioError.providerFailure {
                results.append(false)
            }
        }
        return results
    }

    /// Asserts that `listContainers` fails with an error `matches` accepts.
    private func assertThrows(
        _ what: String, of provider: LocalProvider, file: StaticString = #filePath, line: UInt = #line,
        matches: (FolioError) -> Bool
    ) async {
        do {
            _ = try await provider.listContainers()
            XCTFail("\(what): the call succeeded", file: file, line: line)
        } catch let error as FolioError {
            XCTAssertTrue(matches(error), "\(what): got \(error)", file: file, line: line)
        } catch {
            XCTFail("\(what): got \(error)", file: file, line: line)
        }
    }
}
