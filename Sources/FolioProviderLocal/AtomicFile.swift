import FolioCore
import Foundation
import SystemPackage

/// Writes small provider files (manifest, indexes) so that a reader sees the old or the new content, never a
/// part: a temporary `.folio-` file in the same directory, flushed, renamed over the target.
enum AtomicFile {
    /// Replaces the content of `path` with `data`; flushed to the disk before it is renamed into place unless
    /// `durable` is false (what can be made again: a crash then leaves the old content or none, never a part).
    static func write(_ data: Data, to path: FilePath, durable: Bool = true) throws {
        var directory = path
        directory.removeLastComponent()
        let temporary = directory.appending(ItemName.internalPrefix + "write-" + UUID().uuidString)
        do {
            let descriptor = try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .exclusiveCreate],
                permissions: [.ownerReadWrite, .groupRead, .otherRead]
            )
            try descriptor.closeAfter {
                _ = try data.withUnsafeBytes { try descriptor.writeAll($0) }
                guard !durable || fsync(descriptor.rawValue) == 0 else { throw SystemCalls.lastError("fsync", temporary) }
            }
            try SystemCalls.rename(temporary, to: path)
        } catch let error as Errno {
            SystemCalls.removeFileQuietly(temporary)
            throw FolioError.system(error, "write \(path)")
        } catch {
            SystemCalls.removeFileQuietly(temporary)
            throw error
        }
    }
}
