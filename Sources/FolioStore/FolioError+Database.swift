import FolioCore
import GRDB

extension FolioError {
    /// Maps an error from GRDB or SQLite (or one already mapped) to a ``FolioError`` that says what failed.
    ///
    /// A full disk (`SQLITE_FULL`) becomes ``FolioError/noSpace(_:)``, a store locked by another process
    /// (`SQLITE_BUSY`) ``FolioError/busy(_:)``; every other database error becomes
    /// ``FolioError/io(_:)`` with SQLite's message and extended result code. A ``FolioError`` passes through.
    static func store(_ error: any Error, _ context: String) -> FolioError {
        if let error = error as? FolioError {
            return error
        }
        if let error = error as? DatabaseError {
            let detail = "\(error.message ?? "no message") (SQLite code \(error.extendedResultCode.rawValue))"
            switch error.resultCode {
            case .SQLITE_FULL:
                return .noSpace("metadata store: \(context): \(detail)")
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return .busy("metadata store: \(context): \(detail); is another Folio process using it?")
            default:
                break
            }
            return .io("metadata store: \(context): \(detail)")
        }
        return .io("metadata store: \(context): \(error)")
    }
}
