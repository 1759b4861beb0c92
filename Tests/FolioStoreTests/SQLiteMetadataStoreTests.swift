import Foundation
import FolioCore
import GRDB
import XCTest

@testable import FolioStore

final class SQLiteMetadataStoreTests: StoreTestCase {
    private func openStore() throws -> SQLiteMetadataStore {
        try SQLiteMetadataStore(path: databasePath)
    }

    /// Nodes sorted by inode number, so snapshots compare regardless of row order.
    private func sortedNodes(_ store: SQLiteMetadataStore) throws -> [Node] {
        try store.load().nodes.sorted { $0.ino < $1.ino }
    }

    // MARK: - Opening

    func testNewStoreIsEmptyAndCreatesParentFolders() throws {
        let store = try openStore()
        let snapshot = try store.load()
        XCTAssertTrue(snapshot.nodes.isEmpty)
        XCTAssertTrue(snapshot.tombstones.isEmpty)
        XCTAssertTrue(snapshot.values.isEmpty)
        XCTAssertTrue(FileManager.default.fileExists(atPath: databasePath))
        let journalMode = try store.withConnection { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        XCTAssertEqual(journalMode, "wal")
        let synchronous = try store.withConnection { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        XCTAssertEqual(synchronous, 1, "NORMAL")
        let lockingMode = try store.withConnection { try String.fetchOne($0, sql: "PRAGMA locking_mode") }
        XCTAssertEqual(lockingMode, "exclusive")
        let tempStore = try store.withConnection { try Int.fetchOne($0, sql: "PRAGMA temp_store") }
        XCTAssertEqual(tempStore, 2, "MEMORY: statement journals never spill into files of their own")
    }

    func testSecondOpenerIsRefusedWhileTheStoreIsOpen() throws {
        let store = try openStore()
        try store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(2)]), durable: false)
        XCTAssertThrowsError(try openStore()) { error in
            guard case .busy(let message)? = error as? FolioError else {
                return XCTFail("expected FolioError.busy, got \(error)")
            }
            XCTAssertTrue(message.contains(self.databasePath), message)
        }
        XCTAssertEqual(try store.load().nodes, [StoreFixtures.node(2)], "the refused opener changed nothing")
        try store.close()
        XCTAssertEqual(try openStore().load().nodes, [StoreFixtures.node(2)])
    }

    // MARK: - Round trips

    func testEveryNodeFieldRoundTrips() throws {
        let nodes = StoreFixtures.exhaustiveNodes()
        do {
            let store = try openStore()
            try store.apply(StoreFixtures.batch(upserting: nodes), durable: true)
            XCTAssertEqual(try sortedNodes(store), nodes)
        }
        let loaded = try sortedNodes(try openStore())
        XCTAssertEqual(loaded, nodes)
        // Swift's String equality ignores normalization; the bytes must be kept exactly as given.
        XCTAssertEqual(loaded.map { Array($0.name.utf8) }, nodes.map { Array($0.name.utf8) })
        XCTAssertEqual(
            loaded.map { $0.xattrs.keys.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) } },
            nodes.map { $0.xattrs.keys.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) } }
        )
        XCTAssertEqual(Set(loaded.map(\.state)), Set(StoreFixtures.allStates))
    }

    func testStateIsStoredAsNamedColumnsNotJSON() throws {
        let store = try openStore()
        let nodes = [
            StoreFixtures.node(2, state: .dirty(generation: 9)), StoreFixtures.node(3, state: .failed(reason: "quota")),
            StoreFixtures.node(4, state: .conflicted),
        ]
        try store.apply(StoreFixtures.batch(upserting: nodes), durable: false)
        let rows = try store.withConnection {
            try Row.fetchAll($0, sql: "SELECT state, state_generation, state_reason FROM node ORDER BY ino")
        }
        XCTAssertEqual(rows.map { $0[0] as String }, ["dirty", "failed", "conflicted"])
        XCTAssertEqual(rows.map { $0[1] as Int64? }, [9, nil, nil])
        XCTAssertEqual(rows.map { $0[2] as String? }, [nil, "quota", nil])
    }

    func testUpsertReplacesTheNodeWithTheSameInode() throws {
        let store = try openStore()
        try store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(5), StoreFixtures.node(6)]), durable: false)
        var renamed = StoreFixtures.node(5, name: "renamed.txt", parent: 6, state: .dirty(generation: 2))
        renamed.xattrs = ["user.tag": [1]]
        try store.apply(StoreFixtures.batch(upserting: [renamed]), durable: false)
        XCTAssertEqual(try sortedNodes(store), [renamed, StoreFixtures.node(6)])
    }

    func testDeleteRemovesNodesAndIgnoresUnknownInodes() throws {
        let store = try openStore()
        try store.apply(StoreFixtures.batch(upserting: (2...5).map { StoreFixtures.node($0) }), durable: false)
        var batch = StoreBatch()
        batch.deletes = [3, 5, 999]
        try store.apply(batch, durable: false)
        XCTAssertEqual(try sortedNodes(store).map(\.ino), [2, 4])
    }

    func testUpsertAndDeleteOfTheSameNodeInOneBatchDeletesIt() throws {
        let store = try openStore()
        var batch = StoreFixtures.batch(upserting: [StoreFixtures.node(7), StoreFixtures.node(8)])
        batch.deletes = [7]
        try store.apply(batch, durable: false)
        XCTAssertEqual(try sortedNodes(store).map(\.ino), [8])
    }

    func testTombstonesAreUpsertedReplacedAndDeleted() throws {
        let store = try openStore()
        let first = Tombstone(itemID: ItemID("a"), container: .drive, remoteVersion: "v1", sequence: 1)
        let second = Tombstone(
            itemID: ItemID("b ✓"), container: ContainerID("com.example.notes"), remoteVersion: nil, sequence: .max
        )
        var batch = StoreBatch()
        batch.tombstoneUpserts = [first, second]
        try store.apply(batch, durable: false)
        XCTAssertEqual(Set(try store.load().tombstones), [first, second])

        let replaced = Tombstone(itemID: ItemID("a"), container: .drive, remoteVersion: "v2", sequence: 3)
        batch = StoreBatch()
        batch.tombstoneUpserts = [replaced]
        batch.tombstoneDeletes = [ItemID("b ✓"), ItemID("never-existed")]
        try store.apply(batch, durable: false)
        XCTAssertEqual(try store.load().tombstones, [replaced])
        try store.close()
        XCTAssertEqual(try openStore().load().tombstones, [replaced])
    }

    func testValuesAreSetAndOverwritten() throws {
        let store = try openStore()
        var batch = StoreBatch()
        batch.values = ["anchor": "abc", "next-ino": "100", "ünïcode ✓": "välue\n"]
        try store.apply(batch, durable: false)
        batch.values = ["anchor": "def", "empty": ""]
        try store.apply(batch, durable: false)
        let expected = ["anchor": "def", "next-ino": "100", "ünïcode ✓": "välue\n", "empty": ""]
        XCTAssertEqual(try store.load().values, expected)
        try store.close()
        XCTAssertEqual(try openStore().load().values, expected)
    }

    func testLargeBatchAndEmptyBatches() throws {
        let store = try openStore()
        try store.apply(StoreBatch(), durable: false)
        try store.apply(StoreBatch(), durable: true)
        try store.apply(StoreFixtures.batch(upserting: (2...5001).map { StoreFixtures.node($0) }), durable: true)
        XCTAssertEqual(try store.load().nodes.count, 5000)
        try store.apply(StoreBatch(), durable: true)
        try store.close()
        XCTAssertEqual(try openStore().load().nodes.count, 5000)
    }

    func testConcurrentAppliesFromManyThreadsAreAllKept() throws {
        let store = try openStore()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<50 {
                let ino = UInt64(2 + thread * 1000 + index)
                try? store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(ino)]), durable: index == 49)
            }
        }
        XCTAssertEqual(try store.load().nodes.count, 400)
    }

    // MARK: - Atomicity

    func testFailingBatchLeavesNothingBehind() throws {
        let store = try openStore()
        try store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(2)]), durable: false)

        // The second upsert violates the schema's `CHECK (ino <> 0)`: the whole batch must roll back.
        var batch = StoreFixtures.batch(upserting: [StoreFixtures.node(3), StoreFixtures.node(0)])
        batch.deletes = [2]
        batch.tombstoneUpserts = [Tombstone(itemID: ItemID("t"), container: .drive, remoteVersion: nil, sequence: 1)]
        batch.values = ["anchor": "lost"]
        XCTAssertThrowsError(try store.apply(batch, durable: false)) { error in
            guard case .io(let message)? = error as? FolioError else {
                return XCTFail("expected FolioError.io, got \(error)")
            }
            XCTAssertTrue(message.contains("node 0"), message)
            XCTAssertTrue(message.contains("CHECK constraint failed"), message)
        }
        let snapshot = try store.load()
        XCTAssertEqual(snapshot.nodes, [StoreFixtures.node(2)])
        XCTAssertTrue(snapshot.tombstones.isEmpty)
        XCTAssertTrue(snapshot.values.isEmpty)

        // The store is still usable.
        try store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(3)]), durable: true)
        XCTAssertEqual(try sortedNodes(store).map(\.ino), [2, 3])
    }

    func testFullDatabaseIsNoSpaceAndRollsBack() throws {
        let store = try openStore()
        try store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(2)]), durable: false)
        // Cap the file at its current size: the next growth fails with SQLITE_FULL, as on a full disk.
        try store.withConnection { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        var big = StoreFixtures.node(3)
        big.xattrs = ["user.big": [UInt8](repeating: 7, count: 200_000)]
        let batch = StoreFixtures.batch(upserting: [StoreFixtures.node(4), big])
        XCTAssertThrowsError(try store.apply(batch, durable: true)) { error in
            guard case .noSpace(let message)? = error as? FolioError else {
                return XCTFail("expected FolioError.noSpace, got \(error)")
            }
            XCTAssertTrue(message.contains("node 3"), message)
        }
        XCTAssertEqual(try store.load().nodes, [StoreFixtures.node(2)])

        try store.withConnection { try $0.execute(sql: "PRAGMA max_page_count = 1073741823") }
        try store.apply(batch, durable: true)
        XCTAssertEqual(try sortedNodes(store).map(\.ino), [2, 3, 4])
    }

    // MARK: - Durability

    func testDurableApplyRestoresNormalSynchronousAndSurvivesReopen() throws {
        do {
            let store = try openStore()
            var batch = StoreFixtures.batch(upserting: [StoreFixtures.node(2)])
            batch.values = ["anchor": "1"]
            try store.apply(batch, durable: true)
            let synchronous = try store.withConnection { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
            XCTAssertEqual(synchronous, 1, "the connection goes back to NORMAL after a durable batch")
            try store.close()
        }
        let snapshot = try openStore().load()
        XCTAssertEqual(snapshot.nodes, [StoreFixtures.node(2)])
        XCTAssertEqual(snapshot.values, ["anchor": "1"])
    }

    func testStoreDroppedWithoutCloseKeepsCommittedBatches() throws {
        do {
            let store = try openStore()
            for ino in UInt64(2)...101 {
                try store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(ino)]), durable: false)
            }
        }
        XCTAssertEqual(try openStore().load().nodes.count, 100)
    }

    func testUseAfterCloseThrowsInsteadOfCrashing() throws {
        let store = try openStore()
        try store.close()
        XCTAssertThrowsError(try store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(2)]), durable: false)) {
            guard case .io(let message)? = $0 as? FolioError else { return XCTFail("expected FolioError.io, got \($0)") }
            XCTAssertTrue(message.contains("closed"), message)
        }
        XCTAssertThrowsError(try store.load())
        XCTAssertThrowsError(try store.apply(StoreBatch(), durable: true))
        try store.close()
    }

    // MARK: - Bad files

    func testNonSQLiteFileIsAClearError() throws {
        try FileManager.default.createDirectory(
            atPath: (databasePath as NSString).deletingLastPathComponent, withIntermediateDirectories: true
        )
        try Data(String(repeating: "this is not a database\n", count: 200).utf8)
            .write(to: URL(fileURLWithPath: databasePath))
        XCTAssertThrowsError(try openStore()) { error in
            guard case .io(let message)? = error as? FolioError else {
                return XCTFail("expected FolioError.io, got \(error)")
            }
            XCTAssertTrue(message.contains(self.databasePath), message)
            XCTAssertTrue(message.contains("not a database"), message)
        }
    }

    func testCorruptedPagesAreAClearError() throws {
        do {
            let store = try openStore()
            try store.apply(StoreFixtures.batch(upserting: (2...500).map { StoreFixtures.node($0) }), durable: true)
            try store.close()  // checkpoints: everything is in the main file now
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: databasePath))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 4096)  // keep the header page, destroy every other page
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - 4096))
        try handle.close()

        do {
            let store = try openStore()
            _ = try store.load()
            XCTFail("a corrupted store loaded")
        } catch let error as FolioError {
            guard case .io(let message) = error else { return XCTFail("expected FolioError.io, got \(error)") }
            XCTAssertTrue(message.contains(databasePath), message)
            XCTAssertTrue(message.contains("malformed"), message)
        }
    }

    func testPathThatCannotBeCreatedIsAClearError() throws {
        let blocker = directory.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        XCTAssertThrowsError(try SQLiteMetadataStore(path: blocker.appendingPathComponent("sub/store.sqlite").path)) {
            guard case .io? = $0 as? FolioError else { return XCTFail("expected FolioError.io, got \($0)") }
        }
        XCTAssertThrowsError(try SQLiteMetadataStore(path: directory.path)) {
            guard case .io? = $0 as? FolioError else { return XCTFail("expected FolioError.io, got \($0)") }
        }
    }

    func testNewerSchemaVersionIsRefused() throws {
        try openStore().close()
        let newer = StoreSchema.version + 1
        try DatabaseQueue(path: databasePath).write { try $0.execute(sql: "PRAGMA user_version = \(newer)") }
        XCTAssertThrowsError(try openStore()) { error in
            guard case .notSupported(let message)? = error as? FolioError else {
                return XCTFail("expected FolioError.notSupported, got \(error)")
            }
            XCTAssertTrue(message.contains("newer version of Folio"), message)
            XCTAssertTrue(message.contains(self.databasePath), message)
        }
        let version = try DatabaseQueue(path: databasePath).read { try Int.fetchOne($0, sql: "PRAGMA user_version") }
        XCTAssertEqual(version, newer, "a refused file is left alone")
    }

    func testUnknownMigrationIsRefused() throws {
        try openStore().close()
        try DatabaseQueue(path: databasePath).write {
            try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v\(StoreSchema.version + 1)')")
        }
        XCTAssertThrowsError(try openStore()) { error in
            guard case .notSupported? = error as? FolioError else {
                return XCTFail("expected FolioError.notSupported, got \(error)")
            }
        }
    }

    func testUnreadableRowIsAnErrorNotACrash() throws {
        let store = try openStore()
        try store.apply(StoreFixtures.batch(upserting: [StoreFixtures.node(2), StoreFixtures.node(3)]), durable: false)
        try store.withConnection { try $0.execute(sql: "UPDATE node SET state = 'teleporting' WHERE ino = 3") }
        XCTAssertThrowsError(try store.load()) { error in
            guard case .io(let message)? = error as? FolioError else {
                return XCTFail("expected FolioError.io, got \(error)")
            }
            XCTAssertTrue(message.contains("node 3"), message)
            XCTAssertTrue(message.contains("teleporting"), message)
        }
        try store.withConnection { try $0.execute(sql: "UPDATE node SET state = 'dirty' WHERE ino = 3") }
        XCTAssertThrowsError(try store.load())
        try store.withConnection { try $0.execute(sql: "UPDATE node SET state = 'placeholder', xattrs = x'01FF'") }
        XCTAssertThrowsError(try store.load())
    }
}
