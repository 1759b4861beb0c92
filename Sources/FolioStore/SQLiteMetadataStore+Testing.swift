import FolioCore
import GRDB

extension SQLiteMetadataStore {
    /// Runs `body` on the store's connection, outside any transaction. For tests that need to inspect or constrain
    /// the connection (`PRAGMA synchronous`, `PRAGMA max_page_count`); not part of the store's API.
    func withConnection<T>(_ body: (Database) throws -> T) throws -> T {
        try queue.writeWithoutTransaction(body)
    }
}
