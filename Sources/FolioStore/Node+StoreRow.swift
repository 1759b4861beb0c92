import FolioCore

extension Node {
    /// Binds the node's values to ``StoreSchema/upsertNode`` (parameters 1–30, in ``StoreSchema/nodeColumns``
    /// order).
    func bind(to statement: StoreStatement) {
        let state = state.storeColumns
        statement.bind(1, Int64(bitPattern: ino))
        statement.bind(2, itemID.rawValue)
        statement.bind(3, container.rawValue)
        statement.bind(4, Int64(bitPattern: parent))
        statement.bind(5, name)
        statement.bind(6, kind.rawValue)
        statement.bind(7, size)
        statement.bind(8, modificationTime.seconds)
        statement.bind(9, modificationTime.nanoseconds)
        statement.bind(10, changeTime.seconds)
        statement.bind(11, changeTime.nanoseconds)
        statement.bind(12, accessTime.seconds)
        statement.bind(13, accessTime.nanoseconds)
        statement.bind(14, Int64(mode))
        statement.bind(15, Int64(uid))
        statement.bind(16, Int64(gid))
        statement.bind(17, symlinkTarget)
        statement.bind(18, state.name)
        statement.bind(19, state.generation)
        statement.bind(20, state.reason)
        statement.bind(21, contentFile)
        statement.bind(22, Int64(bitPattern: generation))
        statement.bind(23, remoteVersion)
        // Bit 0: the metadata waits; bit 1: only the time (``Node/timeDirty``). (A build that knows only bit 0
        // reads either as "metadata waits", and sends it all.)
        statement.bind(24, Int64((metadataDirty ? 1 : 0) | (timeDirty ? 2 : 0)))
        statement.bind(25, pinned)
        statement.bind(26, XattrCoding.encode(xattrs))
        statement.bind(27, Int64(bitPattern: dirtySequence))
        statement.bind(28, remoteContainer?.rawValue)
        statement.bind(29, Int64(bitPattern: device))
        statement.bind(30, childrenListed)
    }

    /// Decodes the current row of ``StoreSchema/selectNodes``. Throws (never traps) on a row this build cannot
    /// read, naming the node and the column.
    init(storeRow row: StoreStatement) throws(FolioError) {
        let ino = UInt64(bitPattern: row.optionalInteger(0) ?? 0)
        func what() -> String { "node \(ino)" }
        let kindName = try row.text(5, what(), "kind")
        guard let kind = ItemKind(rawValue: kindName) else {
            throw .io("metadata store: \(what()) has unknown kind '\(kindName)'")
        }
        let state: ItemState
        do {
            state = try ItemState(
                storeName: try row.text(17, what(), "state"),
                generation: row.optionalInteger(18),
                reason: row.optionalText(19)
            )
        } catch {
            throw .io("metadata store: \(what()) has an unreadable state: \(error)")
        }
        let dirty = try row.integer(23, what(), "metadata_dirty")
        let xattrs: [String: [UInt8]]
        do {
            xattrs = try XattrCoding.decode(row.optionalBlob(25))
        } catch {
            throw .io("metadata store: \(what()) has unreadable extended attributes: \(error)")
        }
        self.init(
            ino: ino,
            itemID: ItemID(try row.text(1, what(), "item_id")),
            container: ContainerID(try row.text(2, what(), "container")),
            parent: UInt64(bitPattern: try row.integer(3, what(), "parent")),
            name: try row.text(4, what(), "name"),
            kind: kind,
            size: try row.integer(6, what(), "size"),
            modificationTime: Timestamp(
                seconds: try row.integer(7, what(), "mtime_s"), nanoseconds: try row.integer(8, what(), "mtime_ns")
            ),
            changeTime: Timestamp(
                seconds: try row.integer(9, what(), "ctime_s"), nanoseconds: try row.integer(10, what(), "ctime_ns")
            ),
            accessTime: Timestamp(
                seconds: try row.integer(11, what(), "atime_s"), nanoseconds: try row.integer(12, what(), "atime_ns")
            ),
            mode: UInt32(truncatingIfNeeded: try row.integer(13, what(), "mode")),
            uid: UInt32(truncatingIfNeeded: try row.integer(14, what(), "uid")),
            gid: UInt32(truncatingIfNeeded: try row.integer(15, what(), "gid")),
            symlinkTarget: row.optionalText(16),
            state: state,
            contentFile: row.optionalText(20),
            generation: UInt64(bitPattern: try row.integer(21, what(), "generation")),
            remoteVersion: row.optionalText(22),
            metadataDirty: dirty & 1 != 0,
            timeDirty: dirty & 2 != 0,
            pinned: try row.integer(24, what(), "pinned") != 0,
            xattrs: xattrs,
            dirtySequence: UInt64(bitPattern: try row.integer(26, what(), "dirty_sequence")),
            remoteContainer: row.optionalText(27).map(ContainerID.init(rawValue:))
        )
        device = UInt64(bitPattern: row.optionalInteger(28) ?? 0)
        childrenListed = (row.optionalInteger(29) ?? 1) != 0
    }
}
