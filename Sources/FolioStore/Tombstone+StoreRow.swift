import FolioCore

extension Tombstone {
    /// Binds the tombstone's values to ``StoreSchema/upsertTombstone``.
    func bind(to statement: StoreStatement) {
        statement.bind(1, itemID.rawValue)
        statement.bind(2, container.rawValue)
        statement.bind(3, remoteVersion)
        statement.bind(4, Int64(bitPattern: sequence))
    }

    /// Decodes the current row of ``StoreSchema/selectTombstones``. Throws (never traps) on a row this build
    /// cannot read.
    init(storeRow row: StoreStatement) throws(FolioError) {
        func what() -> String { "tombstone of '\(row.optionalText(0) ?? "")'" }
        self.init(
            itemID: ItemID(try row.text(0, what(), "item_id")),
            container: ContainerID(try row.text(1, what(), "container")),
            remoteVersion: row.optionalText(2),
            sequence: UInt64(bitPattern: try row.integer(3, what(), "sequence"))
        )
    }
}
