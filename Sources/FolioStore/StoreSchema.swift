import GRDB

/// The on-disk schema of the metadata store: its version, its migrations and the SQL the store runs.
///
/// Unsigned 64-bit numbers (inode numbers, generations, sequences) are stored as their signed bit pattern
/// (`Int64(bitPattern:)`), so every value round-trips; SQL never orders or compares them, so the sign does not
/// matter. Timestamps are split into seconds and nanoseconds columns.
enum StoreSchema {
    /// The schema version this build writes, kept in `PRAGMA user_version`. A file with a larger version was
    /// written by a newer Folio and is refused.
    static let version: Int = 6

    /// The migrations, in order. Add new ones at the end; never edit a shipped one.
    static func makeMigrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE node (
                    ino INTEGER PRIMARY KEY NOT NULL CHECK (ino <> 0),
                    item_id TEXT NOT NULL,
                    container TEXT NOT NULL,
                    parent INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    mtime_s INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL,
                    ctime_s INTEGER NOT NULL,
                    ctime_ns INTEGER NOT NULL,
                    atime_s INTEGER NOT NULL,
                    atime_ns INTEGER NOT NULL,
                    mode INTEGER NOT NULL,
                    uid INTEGER NOT NULL,
                    gid INTEGER NOT NULL,
                    symlink_target TEXT,
                    state TEXT NOT NULL,
                    state_generation INTEGER,
                    state_reason TEXT,
                    content_file TEXT,
                    generation INTEGER NOT NULL,
                    remote_version TEXT,
                    metadata_dirty INTEGER NOT NULL,
                    pinned INTEGER NOT NULL,
                    xattrs BLOB,
                    dirty_sequence INTEGER NOT NULL,
                    remote_container TEXT
                );
                CREATE INDEX node_item_id ON node (item_id);
                CREATE INDEX node_parent_name ON node (parent, name);
                CREATE TABLE tombstone (
                    item_id TEXT PRIMARY KEY NOT NULL,
                    container TEXT NOT NULL,
                    remote_version TEXT,
                    sequence INTEGER NOT NULL
                );
                CREATE TABLE value (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                PRAGMA user_version = 1;
                """)
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE TABLE reference (
                    parent INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    target TEXT NOT NULL,
                    PRIMARY KEY (parent, name)
                );
                PRAGMA user_version = 2;
                """)
        }
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                CREATE TABLE conflict_version (
                    item_id TEXT NOT NULL,
                    remote_version TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    mtime_s INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL,
                    content_file TEXT NOT NULL,
                    PRIMARY KEY (item_id, remote_version)
                );
                PRAGMA user_version = 3;
                """)
        }
        migrator.registerMigration("v4") { db in
            try db.execute(sql: """
                ALTER TABLE node ADD COLUMN device INTEGER NOT NULL DEFAULT 0;
                PRAGMA user_version = 4;
                """)
        }
        // Folders are listed on demand (a store from before was listed whole: every folder is listed), and each
        // container's changes are asked for since an anchor.
        migrator.registerMigration("v5") { db in
            try db.execute(sql: """
                ALTER TABLE node ADD COLUMN listed INTEGER NOT NULL DEFAULT 1;
                CREATE TABLE anchor (
                    container TEXT PRIMARY KEY NOT NULL,
                    anchor TEXT NOT NULL
                );
                PRAGMA user_version = 5;
                """)
        }
        // A mount reads only the working set before it answers, the rest folder by folder (indexed by parent
        // already): an index of the working set, and one of the version files for garbage collection.
        migrator.registerMigration("v6") { db in
            try db.execute(sql: """
                CREATE INDEX node_working_set ON node (ino) WHERE \(workingSetCondition);
                CREATE INDEX node_content_file ON node (content_file) WHERE content_file IS NOT NULL;
                PRAGMA user_version = 6;
                """)
        }
        return migrator
    }

    /// ``Node/isWorkingSet`` in SQL (the `node_working_set` index's condition, and its query's: the same text,
    /// so SQLite uses the index).
    static let workingSetCondition = """
        kind = 'directory' OR metadata_dirty <> 0 OR pinned <> 0 OR remote_version IS NULL \
        OR state NOT IN ('placeholder', 'materialized')
        """

    /// The columns of `node` in the order ``Node`` binds and decodes them.
    static let nodeColumns = """
        ino, item_id, container, parent, name, kind, size, mtime_s, mtime_ns, ctime_s, ctime_ns, atime_s, \
        atime_ns, mode, uid, gid, symlink_target, state, state_generation, state_reason, content_file, generation, \
        remote_version, metadata_dirty, pinned, xattrs, dirty_sequence, remote_container, device, listed
        """

    /// Inserts or replaces one node (30 arguments, in ``nodeColumns`` order).
    static let upsertNode = "INSERT OR REPLACE INTO node (\(nodeColumns)) VALUES ("
        + Array(repeating: "?", count: 30).joined(separator: ", ") + ")"

    /// Deletes one node by inode number.
    static let deleteNode = "DELETE FROM node WHERE ino = ?"

    /// Deletes the nodes in one folder (through the `(parent, name)` index).
    static let deleteChildren = "DELETE FROM node WHERE parent = ?"

    /// Reads every node.
    static let selectNodes = "SELECT \(nodeColumns) FROM node"

    /// Reads the nodes of the working set (through its index).
    static let selectWorkingSet = "SELECT \(nodeColumns) FROM node INDEXED BY node_working_set WHERE \(workingSetCondition)"

    /// Reads the nodes of one folder.
    static let selectChildren = "SELECT \(nodeColumns) FROM node WHERE parent = ?"

    /// The parent of the node with one item id.
    static let selectParentOfItem = "SELECT parent FROM node WHERE item_id = ?"

    /// The largest inode number stored.
    static let selectLargestIno = "SELECT max(ino) FROM node"

    /// Every version file nodes refer to (through its index).
    static let selectContentFiles = "SELECT content_file FROM node WHERE content_file IS NOT NULL"

    /// Inserts or replaces one tombstone.
    static let upsertTombstone =
        "INSERT OR REPLACE INTO tombstone (item_id, container, remote_version, sequence) VALUES (?, ?, ?, ?)"

    /// Deletes one tombstone by item id.
    static let deleteTombstone = "DELETE FROM tombstone WHERE item_id = ?"

    /// Reads every tombstone.
    static let selectTombstones = "SELECT item_id, container, remote_version, sequence FROM tombstone"

    /// Sets one named value.
    static let upsertValue = "INSERT OR REPLACE INTO value (key, value) VALUES (?, ?)"

    /// Inserts or replaces one external reference.
    static let upsertReference = "INSERT OR REPLACE INTO reference (parent, name, target) VALUES (?, ?, ?)"

    /// Deletes one external reference by location.
    static let deleteReference = "DELETE FROM reference WHERE parent = ? AND name = ?"

    /// Reads every external reference.
    static let selectReferences = "SELECT parent, name, target FROM reference"

    /// Inserts or replaces one conflict version.
    static let upsertConflict = """
        INSERT OR REPLACE INTO conflict_version (item_id, remote_version, size, mtime_s, mtime_ns, content_file)
        VALUES (?, ?, ?, ?, ?, ?)
        """

    /// Deletes the conflict versions of one item.
    static let deleteConflicts = "DELETE FROM conflict_version WHERE item_id = ?"

    /// Reads every conflict version.
    static let selectConflicts =
        "SELECT item_id, remote_version, size, mtime_s, mtime_ns, content_file FROM conflict_version"

    /// Sets the sync anchor of one container.
    static let upsertAnchor = "INSERT OR REPLACE INTO anchor (container, anchor) VALUES (?, ?)"

    /// Reads every sync anchor.
    static let selectAnchors = "SELECT container, anchor FROM anchor"

    /// Reads every named value.
    static let selectValues = "SELECT key, value FROM value"
}
