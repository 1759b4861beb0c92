import Foundation
import FolioCore
import GRDB
import GRDBSQLite

/// A thin, fast layer over one of GRDB's cached prepared statements: binds and reads columns with the SQLite C API
/// directly, without building `StatementArguments` or `Row` values.
///
/// GRDB still owns the connection, the statement cache, the statement's lifetime and the transactions; this type
/// only avoids GRDB's per-value boxing, which dominates the cost of the store's hot paths (one node per `apply`,
/// 100,000 nodes per `load`). Column reads never trap: a missing required value throws.
struct StoreStatement {
    /// SQLite's "copy the bytes now" destructor.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private let handle: OpaquePointer

    /// Fetches (or prepares and caches) the statement for `sql` on `db` and resets it for a new execution.
    init(_ db: Database, _ sql: String) throws {
        handle = try db.cachedStatement(sql: sql).sqliteStatement
        sqlite3_reset(handle)
    }

    // MARK: - Binding (1-based indices, as in SQL)

    /// Binds an integer.
    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds a boolean as 0 or 1.
    func bind(_ index: Int32, _ value: Bool) {
        sqlite3_bind_int64(handle, index, value ? 1 : 0)
    }

    /// Binds an optional integer, `nil` as `NULL`.
    func bind(_ index: Int32, _ value: Int64?) {
        guard let value else {
            sqlite3_bind_null(handle, index)
            return
        }
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds text (its exact UTF-8 bytes, never normalized), `nil` as `NULL`.
    func bind(_ index: Int32, _ value: String?) {
        guard var value else {
            sqlite3_bind_null(handle, index)
            return
        }
        value.withUTF8 { bytes in
            _ = sqlite3_bind_text(handle, index, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
    }

    /// Binds a blob, `nil` as `NULL`.
    func bind(_ index: Int32, _ value: [UInt8]?) {
        guard let value else {
            sqlite3_bind_null(handle, index)
            return
        }
        value.withUnsafeBytes { bytes in
            // A zero-length blob still needs a non-null pointer, or SQLite stores NULL.
            let pointer = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)
            _ = sqlite3_bind_blob(handle, index, pointer, Int32(bytes.count), Self.transient)
        }
    }

    // MARK: - Stepping

    /// Runs a statement that returns no rows. Throws GRDB's `DatabaseError` with SQLite's message and code.
    func execute() throws {
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code) }
    }

    /// Ends the current execution early (a read abandoned half-way) so the statement holds no read lock.
    func reset() {
        sqlite3_reset(handle)
    }

    /// Advances to the next row; false after the last one.
    func next() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW:
            return true
        case SQLITE_DONE:
            sqlite3_reset(handle)
            return false
        case let code:
            let error = error(code)
            sqlite3_reset(handle)
            throw error
        }
    }

    private func error(_ code: Int32) -> DatabaseError {
        let message = sqlite3_db_handle(handle).flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
    }

    // MARK: - Reading the current row (0-based indices, as in SQLite's column API)

    /// Whether the column is `NULL`.
    func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// An integer column; `nil` if `NULL`.
    func optionalInteger(_ index: Int32) -> Int64? {
        isNull(index) ? nil : sqlite3_column_int64(handle, index)
    }

    /// A text column; `nil` if `NULL`.
    func optionalText(_ index: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// A blob column; `nil` if `NULL`.
    func optionalBlob(_ index: Int32) -> [UInt8]? {
        if isNull(index) { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A required integer column; `what` and `column` name it in the error if it is `NULL`.
    func integer(_ index: Int32, _ what: @autoclosure () -> String, _ column: String) throws(FolioError) -> Int64 {
        guard let value = optionalInteger(index) else { throw Self.missing(what(), column) }
        return value
    }

    /// A required text column; `what` and `column` name it in the error if it is `NULL`.
    func text(_ index: Int32, _ what: @autoclosure () -> String, _ column: String) throws(FolioError) -> String {
        guard let value = optionalText(index) else { throw Self.missing(what(), column) }
        return value
    }

    private static func missing(_ what: String, _ column: String) -> FolioError {
        .io("metadata store: \(what) has no value in required column \(column)")
    }
}
