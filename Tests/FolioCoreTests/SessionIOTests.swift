import FolioCore
import Foundation
import Synchronization
import XCTest

/// The core off the I/O path: a write whose bytes are on their way to a slow disk holds up nothing but its own
/// session's commit (DESIGN.md §3, "The fast path"; issue #14). A write is held just before its `pwrite` (the
/// configuration's hook) while other requests run on other threads; each must finish within a bounded wait.
final class SessionIOTests: XCTestCase {
    func testAWriteOnItsWayToTheDiskHoldsUpNoOtherRequest() async throws {
        let valve = Valve()
        let core = try CoreHarness(beforeContentWrite: { valve.hold() })
        try await core.write("other.txt", "committed before")
        let writer = try await core.openForWriting("slow.txt", truncate: true)
        let fileSystem = core.fileSystem
        let otherIno = try core.ino("other.txt")
        let slowIno = try core.ino("slow.txt")
        let reader = try await fileSystem.open(otherIno, flags: O_RDONLY, context: CoreHarness.context(300))
        let third = try fileSystem.createFile(
            parent: FolioFileSystem.rootIno, name: "third.txt", permissions: 0o644, flags: O_WRONLY,
            context: CoreHarness.context(400)).1
        valve.arm()
        let written = DispatchSemaphore(value: 0)
        Thread {
            _ = try? Array("held".utf8).withUnsafeBytes { try fileSystem.write(writer, offset: 0, bytes: $0) }
            written.signal()
        }.start()
        XCTAssertEqual(valve.entered.wait(timeout: .now() + 10), .success, "the write reaches the hook")
        defer { valve.open() }

        let others = finishes(within: 10) {
            _ = try fileSystem.getAttributes(slowIno)
            _ = try fileSystem.getAttributes(otherIno)
            _ = try fileSystem.lookup(parent: FolioFileSystem.rootIno, name: "other.txt")
            let source = try fileSystem.readSource(reader.handle)
            XCTAssertEqual(source.size, Int64("committed before".utf8.count))
            try fileSystem.release(reader.handle)
        }
        guard others else {
            valve.open()  // the requests held behind the write finish now; the test has failed
            return XCTFail("stat, lookup, read and close of other items wait for nobody's write")
        }

        // A whole write session of another item, commit included, goes through meanwhile.
        let another = finishes(within: 10) {
            _ = try Array("third".utf8).withUnsafeBytes { try fileSystem.write(third, offset: 0, bytes: $0) }
            try fileSystem.synchronize(third)
            try fileSystem.release(third)
        }
        XCTAssertTrue(another, "another item's write, fsync and close wait for nobody's write")
        valve.open()
        XCTAssertEqual(written.wait(timeout: .now() + 10), .success)
        try fileSystem.release(writer)
        let contents = try await core.read("slow.txt")
        XCTAssertEqual(contents, "held")
        let thirdContents = try await core.read("third.txt")
        XCTAssertEqual(thirdContents, "third")
    }

    func testACommitWaitsForTheWritesOfItsSessionThatAreUnderWay() async throws {
        let valve = Valve()
        let core = try CoreHarness(beforeContentWrite: { valve.hold() })
        let writer = try await core.openForWriting("doc.txt", truncate: true)
        let fileSystem = core.fileSystem
        _ = try Array("first ".utf8).withUnsafeBytes { try fileSystem.write(writer, offset: 0, bytes: $0) }
        let docIno = try core.ino("doc.txt")
        valve.arm()
        Thread {
            _ = try? Array("second".utf8).withUnsafeBytes { try fileSystem.write(writer, offset: 6, bytes: $0) }
        }.start()
        XCTAssertEqual(valve.entered.wait(timeout: .now() + 10), .success, "the second write reaches the hook")

        let committed = Mutex(false)
        let committing = Thread {
            try? fileSystem.synchronize(writer)
            committed.withLock { $0 = true }
        }
        committing.start()
        // While the write is held, the commit cannot finish: it would make a version without "second", and the
        // write would then change a committed version. Given a second to do so, it must not.
        XCTAssertTrue(finishes(within: 10) { _ = try fileSystem.getAttributes(docIno) })
        let deadline = Date() + 1
        while Date() < deadline && !committed.withLock({ $0 }) { usleep(5000) }
        XCTAssertFalse(committed.withLock { $0 }, "a commit does not run past a write of its session under way")
        valve.open()
        XCTAssertTrue(finishes(within: 10) { while !committed.withLock({ $0 }) { usleep(1000) } })
        try fileSystem.release(writer)
        let contents = try await core.read("doc.txt")
        XCTAssertEqual(contents, "first second", "the version has both writes")
    }

    func testAppendsOfOneSessionFromManyThreadsNeverOverlap() async throws {
        let core = try CoreHarness()
        let ino = try await {
            try await core.write("log.txt", "")
            return try core.ino("log.txt")
        }()
        let fileSystem = core.fileSystem
        let opened = try await fileSystem.open(ino, flags: O_WRONLY | O_APPEND, context: CoreHarness.context())
        let threads = 8
        let perThread = 200
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                for line in 0..<perThread {
                    let text = String(format: "%02d:%04d\n", thread, line)
                    _ = try? Array(text.utf8).withUnsafeBytes {
                        try fileSystem.write(opened.handle, offset: 0, bytes: $0)
                    }
                }
                group.leave()
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        try fileSystem.release(opened.handle)
        let lines = try await core.read("log.txt").split(separator: "\n")
        XCTAssertEqual(lines.count, threads * perThread, "every append has a place of its own")
        XCTAssertEqual(Set(lines).count, threads * perThread)
    }
}
