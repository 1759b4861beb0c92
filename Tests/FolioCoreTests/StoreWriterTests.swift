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

    /// A core over a ``FlakyStore`` in a temporary folder, and a new core over the same files (as after a crash).
    private struct FlakyCore {
        let directory = NSTemporaryDirectory() + "folio-writer-\(UUID().uuidString.prefix(8))"
        let store: FlakyStore
        let cache: ContentCache
        let configuration = FileSystemConfiguration(groupWriteDelay: .seconds(60))
        let fileSystem: FolioFileSystem

        init() throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try FlakyStore(path: directory + "/metadata.sqlite")
            cache = try ContentCache(directory: FilePath(directory + "/content"))
            fileSystem = try FolioFileSystem(
                store: store, cache: cache, configuration: configuration, logger: Logger(label: "test"))
        }

        /// Closes the store and opens a new core over what it holds.
        func reopened() throws -> FolioFileSystem {
            try store.real.close()
            return try FolioFileSystem(
                store: try SQLiteMetadataStore(path: directory + "/metadata.sqlite"), cache: cache,
                configuration: configuration, logger: Logger(label: "test"))
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A real store on a disk the content cache fills (issue 3's full disk): every write fails while the files
    /// in `content` hold more than `limit` bytes.
    private final class FullDiskStore: MetadataStore {
        let real: SQLiteMetadataStore
        let content: String
        let limit: Int

        init(path: String, content: String, limit: Int) throws {
            real = try SQLiteMetadataStore(path: path)
            self.content = content
            self.limit = limit
        }

        func load() throws(FolioError) -> StoreSnapshot { try real.load() }

        func apply(_ batch: StoreBatch, durable: Bool) throws(FolioError) {
            if contentSize() > limit { throw .noSpace("metadata store: no space left (test)") }
            try real.apply(batch, durable: durable)
        }

        private func contentSize() -> Int {
            var total = 0
            let files = FileManager.default.enumerator(atPath: content)
            while let name = files?.nextObject() as? String {
                let attributes = try? FileManager.default.attributesOfItem(atPath: content + "/" + name)
                guard attributes?[.type] as? FileAttributeType == .typeRegular else { continue }
                total += (attributes?[.size] as? Int) ?? 0
            }
            return total
        }
    }

    /// Whether the core's state lock was held during each store transaction (checked from another thread).
    private final class LockProbe: Sendable {
        let fileSystem = Mutex<FolioFileSystem?>(nil)
        let transactions = Mutex<[(durable: Bool, underLock: Bool)]>([])

        func check(_ durable: Bool) {
            guard let fileSystem = fileSystem.withLock({ $0 }) else { return }
            let underLock = DispatchQueue.global().sync { fileSystem.state.withLockIfAvailable { _ in } == nil }
            transactions.withLock { $0.append((durable, underLock)) }
        }

        func take() -> [(durable: Bool, underLock: Bool)] {
            transactions.withLock { transactions in
                defer { transactions.removeAll() }
                return transactions
            }
        }
    }

    func testACommitTheStoreCannotTakeIsUndoneAndChangesWorkAgainOnceThereIsRoom() throws {
        let directory = NSTemporaryDirectory() + "folio-writer-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try FullDiskStore(
            path: directory + "/metadata.sqlite", content: directory + "/content", limit: 64 << 10)
        let cache = try ContentCache(directory: FilePath(directory + "/content"))
        let configuration = FileSystemConfiguration(groupWriteDelay: .seconds(60))
        let fileSystem = try FolioFileSystem(
            store: store, cache: cache, configuration: configuration, logger: Logger(label: "test"))
        let root = FolioFileSystem.rootIno
        let context = CoreHarness.context(100)
        let (_, handle) = try fileSystem.createFile(
            parent: root, name: "big.bin", permissions: 0o644, flags: O_WRONLY, context: context)
        // The write fills the disk: the commit's transaction, queued and written outside the lock, fails.
        let big = [UInt8](repeating: 7, count: 256 << 10)
        _ = try big.withUnsafeBytes { try fileSystem.write(handle, offset: 0, bytes: $0) }
        XCTAssertThrowsError(try fileSystem.flush(handle, processID: 100), "close says the version cannot be stored") {
            guard case FolioError.noSpace = $0 else { return XCTFail("the store's error, not \($0)") }
        }
        XCTAssertThrowsError(try fileSystem.release(handle), "the last close tries the commit again, the store fails")
        XCTAssertEqual(try fileSystem.lookup(parent: root, name: "big.bin").size, 0,
                       "a commit that cannot be stored is not made: the tree is as before")

        // The session's file went with its last close, as on any failed commit: there is room, changes work again.
        try fileSystem.unlink(parent: root, name: "big.bin", context: context)
        _ = try fileSystem.makeDirectory(parent: root, name: "after", permissions: 0o755, context: context)
        fileSystem.flushDeferredWrites()
        try fileSystem.synchronizeMetadata()

        try store.real.close()
        let reopened = try FolioFileSystem(
            store: try SQLiteMetadataStore(path: directory + "/metadata.sqlite"), cache: cache,
            configuration: configuration, logger: Logger(label: "test"))
        XCTAssertNoThrow(try reopened.lookup(parent: root, name: "after"), "the change after the failure is stored")
        XCTAssertThrowsError(try reopened.lookup(parent: root, name: "big.bin"), "and so is the rm")
    }

    func testWritesThroughWriteWhatIsQueuedOutsideTheStateLock() async throws {
        let probe = LockProbe()
        let core = try CoreHarness(groupWriteDelay: .seconds(60), beforeStoreWrite: { probe.check($0) })
        let fileSystem = core.fileSystem
        probe.fileSystem.withLock { $0 = fileSystem }

        // A change waiting for upload, staged for the group write: the uploader writes it before it picks work.
        _ = try fileSystem.makeDirectory(
            parent: FolioFileSystem.rootIno, name: "folder", permissions: 0o755, context: CoreHarness.context(100))
        _ = fileSystem.nextUploadWork(limit: 8)
        XCTAssertEqual(probe.take().map(\.underLock), [false], "the uploader writes staged changes outside the lock")

        // A durable transaction queued (as a commit at `fsync` queues it) and not written yet when a write-through
        // comes: it is written before, outside the lock; only the write-through's own transaction may be inside.
        let writeThroughs: [(String, () throws -> Void)] = [
            ("the uploader", { _ = fileSystem.nextUploadWork(limit: 8) }),
            ("a listing's merge", { try fileSystem.applyFolderListing(FolioFileSystem.rootIno, items: []) }),
            ("an anchor", { try fileSystem.recordAnchor(SyncAnchor("a1"), for: .drive) }),
        ]
        for (name, writeThrough) in writeThroughs {
            _ = fileSystem.storeWriter.enqueue(StoreBatch(), durable: true, removals: [])
            try writeThrough()
            let queued = probe.take().filter(\.durable)
            XCTAssertEqual(queued.count, 1, "\(name): the queued transaction is written")
            XCTAssertEqual(queued.map(\.underLock), [false], "\(name) waits for no queued commit under the lock")
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
        let flaky = try FlakyCore()
        defer { flaky.remove() }
        let (store, fileSystem) = (flaky.store, flaky.fileSystem)
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
        let reopened = try flaky.reopened()
        let attributes = try reopened.lookup(parent: FolioFileSystem.rootIno, name: "doc.txt")
        XCTAssertEqual(attributes.size, 4, "the commit that could not be stored at first is stored now")
        guard let opened = try reopened.tryOpen(attributes.ino, flags: O_RDONLY, context: context) else {
            return XCTFail("the committed version is local")
        }
        defer { try? reopened.release(opened.handle) }
        let source = try reopened.readSource(opened.handle)
        XCTAssertEqual(source.size, 4)
    }

    /// A remote merge (a folder's listing, a change set with its anchor) queues its rows and anchor and has them
    /// written outside the lock, in one transaction: a `stat` never waits for a merge's SQLite write (issue 36).
    func testARemoteMergeWritesItsRowsAndAnchorOutsideTheLock() async throws {
        let probe = LockProbe()
        let core = try CoreHarness(groupWriteDelay: .seconds(60), beforeStoreWrite: { probe.check($0) })
        let fileSystem = core.fileSystem
        try fileSystem.registerContainers([(.drive, SyncAnchor("a1"))])
        probe.fileSystem.withLock { $0 = fileSystem }
        let listed = (0..<200).map { listedFile("f\($0)", "file\($0).txt") }
        XCTAssertTrue(try fileSystem.applyFolderListing(FolioFileSystem.rootIno, items: listed))
        XCTAssertTrue(try fileSystem.applyChanges(
            RemoteChanges(updated: [listedFile("g", "new.txt")], deleted: [ItemID("f0")], anchor: SyncAnchor("a2")),
            in: .drive))
        let transactions = probe.take()
        XCTAssertEqual(transactions.count, 2, "one transaction per merge")
        XCTAssertEqual(transactions.map(\.underLock), [false, false], "written outside the lock")

        // Written before the merge returned: a daemon killed now (the group write never ran) finds both.
        try core.crashAndRestart()
        XCTAssertEqual(core.fileSystem.anchor(of: .drive), SyncAnchor("a2"))
        XCTAssertEqual(try core.list("").count, 200)
        XCTAssertNoThrow(try core.ino("new.txt"))
        XCTAssertThrowsError(try core.ino("file0.txt"))
    }

    /// A merge whose write fails says so, and what it merged (its rows and its anchor together) is written by the
    /// next write that works: never an anchor without the changes it stands for, nor the other way round.
    func testAMergeWhoseWriteFailsIsWrittenWithItsAnchorByTheNextWrite() throws {
        let flaky = try FlakyCore()
        defer { flaky.remove() }
        let (store, fileSystem) = (flaky.store, flaky.fileSystem)
        try fileSystem.registerContainers([(.drive, SyncAnchor("a1"))])
        XCTAssertTrue(try fileSystem.applyFolderListing(FolioFileSystem.rootIno, items: [listedFile("f", "one.txt")]))

        store.failing.withLock { $0 = true }
        XCTAssertThrowsError(try fileSystem.applyChanges(
            RemoteChanges(updated: [listedFile("g", "two.txt")], deleted: [], anchor: SyncAnchor("a2")), in: .drive),
            "the merge says its write failed") {
            guard case FolioError.noSpace = $0 else { return XCTFail("the store's error, not \($0)") }
        }
        XCTAssertNoThrow(try fileSystem.lookup(parent: FolioFileSystem.rootIno, name: "two.txt"), "merged in memory")
        XCTAssertEqual(fileSystem.anchor(of: .drive), SyncAnchor("a2"))

        store.failing.withLock { $0 = false }
        fileSystem.flushDeferredWrites()
        let reopened = try flaky.reopened()
        XCTAssertEqual(reopened.anchor(of: .drive), SyncAnchor("a2"), "the anchor is stored")
        XCTAssertNoThrow(try reopened.lookup(parent: FolioFileSystem.rootIno, name: "two.txt"), "with its change")
    }
}
