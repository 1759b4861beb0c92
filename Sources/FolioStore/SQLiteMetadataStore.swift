import Foundation
import FolioCore
import GRDB

/// The persistent ``MetadataStore``: one SQLite database (via GRDB) in WAL mode.
///
/// **Durability.** The connection runs with `PRAGMA synchronous = NORMAL`. In WAL mode that makes every committed
/// transaction safe against a crash or `kill -9` of the process (the commit is in the WAL file, which the kernel
/// keeps even if the process dies), but the last commits may roll back after a power loss or kernel crash,
/// because the WAL is only fsynced at checkpoints. A batch applied with `durable: true` is committed with
/// `PRAGMA synchronous = FULL` instead, which fsyncs the WAL as part of the commit, so that batch — and every
/// earlier one, since they precede it in the same file — survives power loss before `apply` returns. Switching
/// the level per transaction costs one fsync only where the caller needs it; the alternatives (an always-FULL
/// connection, or a `wal_checkpoint` after each durable batch) pay an fsync on every change, or two fsyncs plus
/// copying pages into the main file.
///
/// **Errors.** Every database failure is a ``FolioError/io(_:)`` naming the file and the step that failed; a full
/// disk (`SQLITE_FULL`) is ``FolioError/noSpace(_:)``; a store another process has open is ``FolioError/busy(_:)``;
/// a file written by a newer Folio (a larger schema version, or migrations this build does not know) is refused
/// with ``FolioError/notSupported(_:)``. A damaged row is an error, never a crash.
///
/// **Concurrency.** The store is `Sendable`; GRDB's `DatabaseQueue` serializes every access on one connection. The
/// connection uses `PRAGMA locking_mode = EXCLUSIVE`, so while a store is open no other connection (in this or
/// another process) can open the same file, and transactions skip the shared-memory locking of WAL mode.
///
/// **Encoding.** See ``StoreSchema``: unsigned 64-bit values are stored as their signed bit pattern, ``ItemState``
/// as three columns (name, generation, reason), extended attributes as a compact length-prefixed blob.
public final class SQLiteMetadataStore: MetadataStore {
    /// The path of the database file.
    public let path: String

    /// The one connection; internal so that tests can reach it through `withConnection(_:)`.
    let queue: DatabaseQueue

    /// Opens the store at `path`, creating the file and its parent folders if needed, and migrates the schema.
    ///
    /// Throws ``FolioError/io(_:)`` if the file cannot be created or is not a readable SQLite database,
    /// ``FolioError/busy(_:)`` if another store has it open (after waiting up to a second), and
    /// ``FolioError/notSupported(_:)`` if it was written by a newer version of Folio.
    public init(path: String) throws(FolioError) {
        self.path = path
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io("metadata store: cannot create the folder \(folder.path) for \(path): \(error)")
        }
        // Made here, 0600 whatever the umask: SQLite gives its journal and WAL the mode of the database file.
        let file = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
        if file >= 0 { Glibc.close(file) }
        var configuration = Configuration()
        configuration.label = "FolioStore"
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(1)
        configuration.prepareDatabase { db in
            // Before WAL is entered: the WAL index then lives in process memory instead of a shared `-shm` file,
            // each transaction skips six `fcntl` lock calls, and no other process can open the store meanwhile.
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            // Statement journals and temporary b-trees in memory: a big group write otherwise spills its statement
            // journal into a file of its own in /var/tmp, one `pwrite` per page (nearly one per item of a first
            // listing).
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw .store(error, "cannot open \(path) (the file is damaged or is not a Folio metadata store)")
        }
        try Self.prepare(queue, path: path)
    }

    /// Checks the schema version and runs pending migrations.
    private static func prepare(_ queue: DatabaseQueue, path: String) throws(FolioError) {
        let migrator = StoreSchema.makeMigrator()
        do {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                if try version > StoreSchema.version || migrator.hasBeenSuperseded(db) {
                    throw FolioError.notSupported(
                        "metadata store \(path) was written by a newer version of Folio (schema version \(version); "
                            + "this version reads up to \(StoreSchema.version)); upgrade Folio to open it"
                    )
                }
            }
            try migrator.migrate(queue)
        } catch {
            throw .store(error, "cannot read or migrate the schema of \(path)")
        }
    }

    /// Reads every node, tombstone, value and reference, in one read transaction.
    public func load() throws(FolioError) -> StoreSnapshot {
        try access("cannot load") { db in
            var snapshot = StoreSnapshot()
            try db.inTransaction(.deferred) {
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM node") ?? 0
                snapshot.nodes.reserveCapacity(count)
                try Self.readNodes(db, StoreSchema.selectNodes, into: &snapshot.nodes)
                try Self.readEverythingButNodes(db, into: &snapshot)
                return .commit
            }
            snapshot.largestIno = snapshot.nodes.lazy.map(\.ino).max() ?? 0
            return snapshot
        }
    }

    /// Reads the working set (every folder and every node that is not a plain file at rest, through the
    /// `node_working_set` index) and everything but nodes, in one read transaction.
    public func loadWorkingSet() throws(FolioError) -> StoreSnapshot {
        try access("cannot load") { db in
            var snapshot = StoreSnapshot()
            snapshot.isWorkingSet = true
            try db.inTransaction(.deferred) {
                try Self.readNodes(db, StoreSchema.selectWorkingSet, into: &snapshot.nodes)
                try Self.readEverythingButNodes(db, into: &snapshot)
                let largest = try StoreStatement(db, StoreSchema.selectLargestIno)
                defer { largest.reset() }
                if try largest.next() { snapshot.largestIno = UInt64(bitPattern: largest.optionalInteger(0) ?? 0) }
                return .commit
            }
            return snapshot
        }
    }

    /// Every stored node whose parent is `folder` (through the `(parent, name)` index).
    public func loadChildren(of folder: UInt64) throws(FolioError) -> [Node] {
        try access("cannot read the folder \(folder) of") { db in
            let statement = try StoreStatement(db, StoreSchema.selectChildren)
            defer { statement.reset() }
            statement.bind(1, Int64(bitPattern: folder))
            var nodes: [Node] = []
            while try statement.next() {
                nodes.append(try Node(storeRow: statement))
            }
            return nodes
        }
    }

    /// The parent inode of every stored node with one of `items`' ids (through the item id index).
    public func folders(holding items: [ItemID]) throws(FolioError) -> Set<UInt64> {
        if items.isEmpty { return [] }
        return try access("cannot find items in") { db in
            let statement = try StoreStatement(db, StoreSchema.selectParentOfItem)
            defer { statement.reset() }
            var folders: Set<UInt64> = []
            for item in items {
                statement.bind(1, item.rawValue)
                while try statement.next() {
                    if let parent = statement.optionalInteger(0) { folders.insert(UInt64(bitPattern: parent)) }
                }
            }
            return folders
        }
    }

    /// Every version file a stored node refers to (through the `node_content_file` index).
    public func contentFiles() throws(FolioError) -> Set<String> {
        try access("cannot read the version files of") { db in
            let statement = try StoreStatement(db, StoreSchema.selectContentFiles)
            defer { statement.reset() }
            var files: Set<String> = []
            while try statement.next() {
                if let file = statement.optionalText(0) { files.insert(file) }
            }
            return files
        }
    }

    /// Appends the nodes `sql` selects (in ``StoreSchema/nodeColumns`` order) to `nodes`.
    private static func readNodes(_ db: Database, _ sql: String, into nodes: inout [Node]) throws {
        let statement = try StoreStatement(db, sql)
        defer { statement.reset() }
        while try statement.next() {
            nodes.append(try Node(storeRow: statement))
        }
    }

    /// Reads tombstones, values, conflict versions, anchors and references into `snapshot`.
    private static func readEverythingButNodes(_ db: Database, into snapshot: inout StoreSnapshot) throws {
        let tombstones = try StoreStatement(db, StoreSchema.selectTombstones)
        defer { tombstones.reset() }
        while try tombstones.next() {
            snapshot.tombstones.append(try Tombstone(storeRow: tombstones))
        }
        let values = try StoreStatement(db, StoreSchema.selectValues)
        defer { values.reset() }
        while try values.next() {
            snapshot.values[try values.text(0, "a value", "key")] = try values.text(1, "a value", "value")
        }
        let conflicts = try StoreStatement(db, StoreSchema.selectConflicts)
        defer { conflicts.reset() }
        while try conflicts.next() {
            snapshot.conflicts.append(ConflictVersion(
                itemID: ItemID(try conflicts.text(0, "a conflict version", "item_id")),
                remoteVersion: try conflicts.text(1, "a conflict version", "remote_version"),
                size: try conflicts.integer(2, "a conflict version", "size"),
                modificationTime: Timestamp(
                    seconds: try conflicts.integer(3, "a conflict version", "mtime_s"),
                    nanoseconds: try conflicts.integer(4, "a conflict version", "mtime_ns")),
                contentFile: try conflicts.text(5, "a conflict version", "content_file")))
        }
        let anchors = try StoreStatement(db, StoreSchema.selectAnchors)
        defer { anchors.reset() }
        while try anchors.next() {
            let container = ContainerID(try anchors.text(0, "an anchor", "container"))
            snapshot.anchors[container] = SyncAnchor(try anchors.text(1, "an anchor", "anchor"))
        }
        let references = try StoreStatement(db, StoreSchema.selectReferences)
        defer { references.reset() }
        while try references.next() {
            snapshot.references.append(ExternalReference(
                parent: UInt64(bitPattern: try references.integer(0, "a reference", "parent")),
                name: try references.text(1, "a reference", "name"),
                target: ItemID(try references.text(2, "a reference", "target"))))
        }
    }

    /// Applies `batch` in one write transaction: all of it or, if anything fails, none of it.
    ///
    /// Within the transaction the parts run in this order: node upserts, node deletes, tombstone upserts,
    /// tombstone deletes, values, anchors, reference upserts, reference deletes — so a node (or tombstone) listed both as
    /// upserted and deleted ends up deleted.
    /// With `durable: true` the commit is fsynced before this returns (see the type's documentation); an empty
    /// durable batch checkpoints the WAL, which makes every earlier commit durable.
    public func apply(_ batch: StoreBatch, durable: Bool) throws(FolioError) {
        if batch.isEmpty {
            if durable { try checkpoint() }
            return
        }
        let path = path
        try access("cannot apply a batch") { db in
            // Not a cached statement: SQLite applies `PRAGMA synchronous` when the statement is prepared.
            if durable { try db.execute(sql: "PRAGMA synchronous = FULL") }
            defer { if durable { _ = try? db.execute(sql: "PRAGMA synchronous = NORMAL") } }
            // `BEGIN`/`COMMIT` as cached statements: GRDB's `inTransaction` parses them again on every call, which
            // is a third of the CPU time of a one-node batch.
            try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
            do {
                try Self.write(batch, to: db, path: path)
                try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            } catch {
                // SQLite may have rolled back already (a full disk can do that); then there is nothing to undo.
                if db.isInsideTransaction {
                    _ = try? db.cachedStatement(sql: "ROLLBACK TRANSACTION").execute()
                }
                throw error
            }
        }
    }

    /// Runs the statements of `batch` inside the caller's transaction.
    private static func write(_ batch: StoreBatch, to db: Database, path: String) throws {
        if !batch.upserts.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.upsertNode)
            for node in batch.upserts {
                node.bind(to: statement)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot write node \(node.ino) ('\(node.name)') to \(path)")
                }
            }
        }
        if !batch.deletes.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.deleteNode)
            let children = try StoreStatement(db, StoreSchema.deleteChildren)
            for ino in batch.deletes {
                statement.bind(1, Int64(bitPattern: ino))
                children.bind(1, Int64(bitPattern: ino))
                do {
                    try statement.execute()
                    try children.execute()
                } catch {
                    throw FolioError.store(error, "cannot delete node \(ino) from \(path)")
                }
            }
        }
        if !batch.tombstoneUpserts.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.upsertTombstone)
            for tombstone in batch.tombstoneUpserts {
                tombstone.bind(to: statement)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot write the tombstone of \(tombstone.itemID) to \(path)")
                }
            }
        }
        if !batch.tombstoneDeletes.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.deleteTombstone)
            for itemID in batch.tombstoneDeletes {
                statement.bind(1, itemID.rawValue)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot delete the tombstone of \(itemID) from \(path)")
                }
            }
        }
        if !batch.values.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.upsertValue)
            for (key, value) in batch.values {
                statement.bind(1, key)
                statement.bind(2, value)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot write value '\(key)' to \(path)")
                }
            }
        }
        if !batch.anchors.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.upsertAnchor)
            for (container, anchor) in batch.anchors {
                statement.bind(1, container.rawValue)
                statement.bind(2, anchor.rawValue)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot write the sync anchor of \(container) to \(path)")
                }
            }
        }
        if !batch.referenceUpserts.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.upsertReference)
            for reference in batch.referenceUpserts {
                statement.bind(1, Int64(bitPattern: reference.parent))
                statement.bind(2, reference.name)
                statement.bind(3, reference.target.rawValue)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot write the reference '\(reference.name)' to \(path)")
                }
            }
        }
        if !batch.conflictDeletes.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.deleteConflicts)
            for itemID in batch.conflictDeletes {
                statement.bind(1, itemID.rawValue)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot delete the conflict versions of \(itemID) from \(path)")
                }
            }
        }
        if !batch.conflictUpserts.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.upsertConflict)
            for conflict in batch.conflictUpserts {
                statement.bind(1, conflict.itemID.rawValue)
                statement.bind(2, conflict.remoteVersion)
                statement.bind(3, conflict.size)
                statement.bind(4, conflict.modificationTime.seconds)
                statement.bind(5, conflict.modificationTime.nanoseconds)
                statement.bind(6, conflict.contentFile)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot write a conflict version of \(conflict.itemID) to \(path)")
                }
            }
        }
        if !batch.referenceDeletes.isEmpty {
            let statement = try StoreStatement(db, StoreSchema.deleteReference)
            for location in batch.referenceDeletes {
                statement.bind(1, Int64(bitPattern: location.parent))
                statement.bind(2, location.name)
                do {
                    try statement.execute()
                } catch {
                    throw FolioError.store(error, "cannot delete the reference '\(location.name)' from \(path)")
                }
            }
        }
    }

    /// Copies the WAL into the main database file and fsyncs both, making every commit so far durable.
    public func checkpoint() throws(FolioError) {
        try access("cannot checkpoint") { db in
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(FULL)")
        }
    }

    /// Checkpoints and closes the database connection. Later calls fail with ``FolioError/io(_:)``; closing twice
    /// does nothing. Dropping the store without calling this is safe too: committed data is already in the WAL.
    public func close() throws(FolioError) {
        do {
            try queue.close()
        } catch {
            throw .store(error, "cannot close \(path)")
        }
    }

    /// Runs `body` on the connection, serialized with every other access, and maps its errors; `failure` says
    /// what was being done (`cannot load`). Refuses to touch a closed connection (SQLite would crash).
    private func access<T>(_ failure: String, _ body: (Database) throws -> T) throws(FolioError) -> T {
        do {
            return try queue.writeWithoutTransaction { db in
                guard db.sqliteConnection != nil else {
                    throw FolioError.io("metadata store: \(failure) \(path): the store is closed")
                }
                return try body(db)
            }
        } catch {
            throw .store(error, "\(failure) \(path)")
        }
    }
}
