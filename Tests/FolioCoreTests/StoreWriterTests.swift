@testable import FolioCore
import FolioStore
import Foundation
import Logging
import Synchronization
import SystemPackage
import XCTest

/// The core off the I/O path, the store's side (issue #14): a metadata transaction and its `fsync` run outside the
/// core's state lock, in order, through the ``StoreWriter``; a `stat` or an open and close of another file does not
/// wait for them, a durable reply still waits for its transaction, and a store failure still surfaces.
final class StoreWriterTests: XCTestCase {
    /// A real store that fails every write while `failing` is set (a full or broken disk).
    private final class FlakyStore: MetadataStore {
        let real: SQLiteMetadataStore
        let failing = Mutex(false)

        init(path: String) throws { real = try SQLiteMetadataStore(path: path) }

        func load() throws(FolioError) -> StoreSnapshot { try real.load() }

        func apply(_ batch: StoreBatch, durable: Bool) throws(FolioError) {
            if failing.withLock({ $0 }) { throw .noSpace("metadata store: no space left (test)") }
            try real.apply(batch, durable: durable)
        }
    }

    func testAStoreTransactionUnderWayHoldsUpNoStatOrOpenOfAnotherFile() async throws {
        let valve = Valve()
        let core = try CoreHarness(groupWriteDelay: .seconds(60), beforeStoreWrite: { if $0 { valve.hold() } })
        try await core.write("other.txt", "committed before")
        let writer = try await core.openForWriting("synced.txt", truncate: true)
        let fileSystem = core.fileSystem
        let otherIno = try core.ino("other.txt")
        _ = try Array("synced".utf8).withUnsafeBytes { try fileSystem.write(writer, offset: 0, bytes: $0) }
        valve.arm()
        let synced = DispatchSemaphore(value: 0)
        Thread {
            do { try fileSystem.synchronize(writer) } catch { XCTFail("fsync: \(error)") }
            synced.signal()
        }.start()
        XCTAssertEqual(valve.entered.wait(timeout: .now() + 10), .success, "the fsync's transaction reaches the hook")
        defer { valve.open() }

        let others = finishes(within: 10) {
            _ = try fileSystem.getAttributes(otherIno)
            _ = try fileSystem.lookup(parent: FolioFileSystem.rootIno, name: "other.txt")
            let opened = try fileSystem.tryOpen(otherIno, flags: O_RDONLY, context: CoreHarness.context(300))
            guard let opened else { return XCTFail("a materialized file opens at once") }
            try fileSystem.flush(opened.handle, processID: 300)
            try fileSystem.release(opened.handle)
        }
        guard others else {
            valve.open()  // the requests held behind the transaction finish now; the test has failed
            return XCTFail("stat, lookup, open and close of another file wait for nobody's store transaction")
        }
        XCTAssertEqual(synced.wait(timeout: .now()), .timedOut, "fsync answers only once its transaction is written")
        valve.open()
        XCTAssertEqual(synced.wait(timeout: .now() + 10), .success)
        try fileSystem.release(writer)

        // Written before the reply: a daemon killed right after the fsync finds it (the group write never ran).
        try core.crashAndRestart()
        let contents = try await core.read("synced.txt")
        XCTAssertEqual(contents, "synced")
    }

    func testAStoreFailureOutsideTheLockSurfacesAndLosesNothing() async throws {
        let directory = NSTemporaryDirectory() + "folio-writer-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try FlakyStore(path: directory + "/metadata.sqlite")
        let cache = try ContentCache(directory: FilePath(directory + "/content"))
        let configuration = FileSystemConfiguration(groupWriteDelay: .seconds(60))
        let fileSystem = try FolioFileSystem(
            store: store, cache: cache, configuration: configuration, logger: Logger(label: "test"))
        let context = CoreHarness.context(100)
        let (_, handle) = try fileSystem.createFile(
            parent: FolioFileSystem.rootIno, name: "doc.txt", permissions: 0o644, flags: O_WRONLY, context: context)
        _ = try Array("kept".utf8).withUnsafeBytes { try fileSystem.write(handle, offset: 0, bytes: $0) }

        store.failing.withLock { $0 = true }
        XCTAssertThrowsError(try fileSystem.synchronize(handle), "fsync reports that the store cannot be written") {
            guard case FolioError.noSpace = $0 else { return XCTFail("the store's error, not \($0)") }
        }
        XCTAssertThrowsError(
            try fileSystem.makeDirectory(
                parent: FolioFileSystem.rootIno, name: "folder", permissions: 0o755, context: context),
            "while the store fails, a change that cannot be stored fails at once")
        XCTAssertThrowsError(try fileSystem.lookup(parent: FolioFileSystem.rootIno, name: "folder"),
                             "the failed mkdir changed nothing")

        store.failing.withLock { $0 = false }
        try fileSystem.release(handle)
        fileSystem.flushDeferredWrites()
        try fileSystem.synchronizeMetadata()

        // What the failed write held is in the store now: a new core over it (as after a crash) has the content.
        try store.real.close()
        let reopened = try FolioFileSystem(
            store: try SQLiteMetadataStore(path: directory + "/metadata.sqlite"), cache: cache,
            configuration: configuration, logger: Logger(label: "test"))
        let attributes = try reopened.lookup(parent: FolioFileSystem.rootIno, name: "doc.txt")
        XCTAssertEqual(attributes.size, 4, "the commit that could not be stored at first is stored now")
        guard let opened = try reopened.tryOpen(attributes.ino, flags: O_RDONLY, context: context) else {
            return XCTFail("the committed version is local")
        }
        defer { try? reopened.release(opened.handle) }
        let source = try reopened.readSource(opened.handle)
        XCTAssertEqual(source.size, 4)
    }
}
