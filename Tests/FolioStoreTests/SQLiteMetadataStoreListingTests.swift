import Foundation
import FolioCore
import GRDB
import XCTest

@testable import FolioStore

/// Schema v5: whether a folder's children were listed, and the sync anchor of each container.
final class SQLiteMetadataStoreListingTests: StoreTestCase {
    func testListedFlagsAndAnchorsSurviveReopening() throws {
        var unlisted = StoreFixtures.node(3)
        unlisted.kind = .directory
        unlisted.childrenListed = false
        var listed = StoreFixtures.node(4)
        listed.kind = .directory
        var batch = StoreFixtures.batch(upserting: [unlisted, listed])
        batch.anchors[.drive] = SyncAnchor("a1")
        batch.anchors[ContainerID("com.example.notes")] = SyncAnchor("n7")
        let store = try SQLiteMetadataStore(path: databasePath)
        try store.apply(batch, durable: true)
        try store.close()

        let snapshot = try SQLiteMetadataStore(path: databasePath).load()
        let nodes = Dictionary(uniqueKeysWithValues: snapshot.nodes.map { ($0.ino, $0) })
        XCTAssertEqual(nodes[3]?.childrenListed, false)
        XCTAssertEqual(nodes[4]?.childrenListed, true)
        XCTAssertEqual(snapshot.anchors, [.drive: SyncAnchor("a1"), ContainerID("com.example.notes"): SyncAnchor("n7")])
    }

    /// A store written before folders were listed on demand held the whole remote: its folders count as listed.
    func testFoldersOfAVersion4StoreAreListed() throws {
        var folder = StoreFixtures.node(3)
        folder.kind = .directory
        folder.childrenListed = false
        let store = try SQLiteMetadataStore(path: databasePath)
        try store.apply(StoreFixtures.batch(upserting: [folder]), durable: true)
        try store.close()
        // Back to what version 4 wrote: no `listed` column, no anchors.
        try DatabaseQueue(path: databasePath).write { db in
            try db.execute(sql: """
                ALTER TABLE node DROP COLUMN listed;
                DROP TABLE anchor;
                DELETE FROM grdb_migrations WHERE identifier = 'v5';
                PRAGMA user_version = 4;
                """)
        }
        let snapshot = try SQLiteMetadataStore(path: databasePath).load()
        XCTAssertEqual(snapshot.nodes.first?.childrenListed, true)
        XCTAssertEqual(snapshot.anchors, [:])
    }
}
