import Foundation
import XCTest

/// DESIGN.md §2 "Upload": the queue is persistent; `kill -9` loses nothing committed.
final class DurabilityTests: MountTestCase {
    /// Slow provider calls so the uploads are still running when the daemon is killed.
    override var mountArguments: [String] { ["--simulate-latency-ms", "300"] }

    func testKilledDaemonUploadsEverythingAfterRestart() throws {
        Shell.check("""
            set -e
            mkdir -p '\(fixture.path("batch"))'
            for i in $(seq 1 200); do printf 'document %d\\n%s\\n' $i "$(head -c 300 /dev/zero | tr '\\0' x)" > '\(fixture.path("batch"))'/doc$i.txt; done
            """, timeout: 120)
        let pendingBefore = fixture.pendingUploads ?? 0
        XCTAssertGreaterThan(pendingBefore, 0, "the test needs uploads still pending when the daemon dies")
        fixture.kill9()
        let uploadedBefore = (try? FileManager.default.contentsOfDirectory(atPath: fixture.remotePath("batch")))?.count ?? 0
        XCTAssertLessThan(uploadedBefore, 200)
        fixture.extraArguments = []
        try fixture.start()
        for i in [1, 77, 200] {
            XCTAssertTrue(Shell.check("cat '\(fixture.path("batch/doc\(i).txt"))'").hasPrefix("document \(i)\n"))
        }
        fixture.waitForUploads(timeout: 120)
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.remotePath("batch"))
        XCTAssertEqual(names.count, 200, "every committed file reached the remote, none twice")
        for i in 1...200 {
            let content = try String(contentsOfFile: fixture.remotePath("batch/doc\(i).txt"), encoding: .utf8)
            XCTAssertTrue(content.hasPrefix("document \(i)\n") && content.count == "document \(i)\n".count + 301)
        }
    }

    func testFsyncedDataSurvivesKillBeforeClose() throws {
        let file = fixture.path("journal.txt")
        let script = """
            import os, sys, signal
            fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b'fsynced line\\n')
            os.fsync(fd)
            os.write(fd, b'never committed\\n')
            print('ready', flush=True)
            signal.pause()
            """
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        writer.arguments = ["-c", script, file]
        let out = Pipe()
        writer.standardOutput = out
        try writer.run()
        _ = out.fileHandleForReading.availableData
        fixture.kill9()
        writer.terminate()
        writer.waitUntilExit()
        try fixture.start()
        XCTAssertEqual(Shell.check("cat '\(file)'"), "fsynced line\n")
        fixture.waitForUploads()
        XCTAssertEqual(try String(contentsOfFile: fixture.remotePath("journal.txt"), encoding: .utf8), "fsynced line\n")
    }
}
