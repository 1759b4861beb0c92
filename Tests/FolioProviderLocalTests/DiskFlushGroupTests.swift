import FolioCore
@testable import FolioProviderLocal
import Synchronization
import SystemPackage
import XCTest

/// The group commit behind the local provider's durable uploads.
final class DiskFlushGroupTests: XCTestCase {
    func testConcurrentUploadsShareFlushesAndEachGetsOneStartedAfterItsCall() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flush-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let real = try DiskFlushGroup(root: FilePath(directory.path))
        try await real.flush()
        XCTAssertEqual(real.flushCount, 1)
        // Each flush takes 50 ms here, so the callers arriving meanwhile wait for the next one together.
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY)
        let group = DiskFlushGroup(descriptor: descriptor) { fd in
            usleep(50_000)
            return LibcExtras.syncfs(fd)
        }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for _ in 0..<200 { tasks.addTask { try await group.flush() } }
            try await tasks.waitForAll()
        }
        let shared = group.flushCount
        XCTAssertGreaterThan(shared, 0)
        XCTAssertLessThan(shared, 20, "callers in flight together share flushes")
        // A caller after all of them is not covered by an earlier flush: one more runs.
        try await group.flush()
        XCTAssertEqual(group.flushCount, shared + 1)
    }

    func testAFlushWaitsForTheUploadsInProgress() async throws {
        // Two uploads in progress: the first to ask waits for the second (within the linger limit, here a
        // minute), and one flush covers both. Without the wait the first flush would run alone.
        let calls = Atomic<Int>(0)
        let group = DiskFlushGroup(descriptor: -1, linger: 60_000_000) { _ in
            calls.add(1, ordering: .sequentiallyConsistent)
            return 0
        }
        group.uploadStarted()
        group.uploadStarted()
        let first = Task { try await group.flush() }
        for _ in 0..<10_000 where group.waitingCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
        XCTAssertEqual(group.waitingCount, 1)
        // Nothing flushes while the second upload has not asked (a slow machine could hide a flush that runs
        // too early, never fail this).
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(calls.load(ordering: .sequentiallyConsistent), 0, "a flush did not wait for the uploads")
        try await group.flush()
        try await first.value
        XCTAssertEqual(calls.load(ordering: .sequentiallyConsistent), 1)
        // An upload that ends without asking (it failed, or had nothing to flush) no longer holds a flush back.
        let third = Task { try await group.flush() }
        group.uploadEnded()
        try await third.value
        XCTAssertEqual(calls.load(ordering: .sequentiallyConsistent), 2)
        group.uploadEnded()
    }

    func testAFailingFlushFailsItsCallers() async {
        let group = DiskFlushGroup(descriptor: -1) { LibcExtras.syncfs($0) }
        do {
            try await group.flush()
            XCTFail("a flush of a bad descriptor succeeded")
        } catch let error as FolioError {
            XCTAssertTrue("\(error)".contains("flush the remote's disk"), "\(error)")
        } catch {
            XCTFail("unexpected \(error)")
        }
    }

    func testAFlushThatFailsWhileACallerWaitsFailsThatCallerToo() async throws {
        // syncfs reports a write-back error once: the flush running when B asks may be the one that met the
        // error for B's data, so B is told although its own flush then succeeds.
        let calls = Atomic<Int>(0)
        let group = DiskFlushGroup(descriptor: -1) { _ in
            if calls.add(1, ordering: .sequentiallyConsistent).newValue == 1 {
                usleep(100_000)
                errno = EIO
                return -1
            }
            return 0
        }
        let first = Task { try await group.flush() }
        while calls.load(ordering: .sequentiallyConsistent) == 0 { await Task.yield() }
        let second = await Result(catching: { try await group.flush() })
        XCTAssertThrowsError(try second.get())
        let firstResult = await first.result
        XCTAssertThrowsError(try firstResult.get())
        // Later callers, whose data a successful flush wrote back, succeed.
        try await group.flush()
        try await group.flush()
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
