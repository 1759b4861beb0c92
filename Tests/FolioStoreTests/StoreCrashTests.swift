import Foundation
import FolioCore
import FolioStore
import XCTest

/// Kills a process with SIGKILL right after `apply` returns and checks that a new process finds every batch.
///
/// The child is this same test binary, re-run with only ``testChildProcessEntryPoint()`` selected and the
/// database path in the environment; without that environment the entry point skips itself.
final class StoreCrashTests: StoreTestCase {
    private static let pathVariable = "FOLIO_STORE_CRASH_CHILD_DB"
    private static let countVariable = "FOLIO_STORE_CRASH_CHILD_COUNT"

    func testKilledProcessKeepsEveryCommittedBatch() throws {
        let databasePath = directory.appendingPathComponent("store.sqlite").path
        let logPath = directory.appendingPathComponent("child.log")
        _ = FileManager.default.createFile(atPath: logPath.path, contents: nil)
        let log = try FileHandle(forWritingTo: logPath)
        defer { try? log.close() }

        let child = Process()
        child.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(
            atPath: "/proc/self/exe"
        ))
        child.arguments = ["FolioStoreTests.StoreCrashTests/testChildProcessEntryPoint"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.pathVariable] = databasePath
        environment[Self.countVariable] = "300"
        child.environment = environment
        child.standardOutput = log
        child.standardError = log
        try child.run()
        child.waitUntilExit()

        let output = (try? String(contentsOf: logPath, encoding: .utf8)) ?? ""
        XCTAssertEqual(child.terminationReason, .uncaughtSignal, output)
        XCTAssertEqual(child.terminationStatus, SIGKILL, output)
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: databasePath + "-wal"),
            "the child died without closing the database, so its WAL is still there"
        )

        let snapshot = try SQLiteMetadataStore(path: databasePath).load()
        XCTAssertEqual(Set(snapshot.nodes.map(\.ino)), Set((UInt64(2)...301)), output)
        XCTAssertEqual(snapshot.values, ["last": "301"], output)
        XCTAssertEqual(snapshot.nodes.first { $0.ino == 301 }, StoreFixtures.node(301))
    }

    /// Runs only in the child process: applies single-node batches (not durable), then kills itself.
    func testChildProcessEntryPoint() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let databasePath = environment[Self.pathVariable],
              let count = environment[Self.countVariable].flatMap(UInt64.init)
        else {
            throw XCTSkip("only runs in the child process of testKilledProcessKeepsEveryCommittedBatch")
        }
        let store = try SQLiteMetadataStore(path: databasePath)
        for ino in 2..<(2 + count) {
            var batch = StoreFixtures.batch(upserting: [StoreFixtures.node(ino)])
            batch.values = ["last": "\(ino)"]
            try store.apply(batch, durable: false)
        }
        kill(getpid(), SIGKILL)
        XCTFail("still alive after SIGKILL")
    }
}
