import FolioCore
import Glibc
import Synchronization
import SystemPackage

/// Which files the spread folders (`<two hex digits>/`) of the provider's tags and descriptions hold, read with
/// one `readdir` and read again only when a folder's status changes. Most items have neither a tags file nor a
/// description: asking this is one `lstat` per spread folder and pass (``names(in:checked:)``), where opening each
/// item's file is a failed `open` per item (a first listing of placeholders asked 3.6 times per item).
///
/// A folder is read only once this process has seen it with the same status for two seconds, by its own
/// monotonic clock. File times may be coarse (down to seconds, or two on some file systems), and on a share
/// they come from another machine's clock: a name added in the same tick as the `readdir` could leave the
/// folder's status as it was, but not two seconds after the status was first seen. Of a folder seen changed more
/// recently the index knows nothing (`nil`), and the caller opens the item's file as before. Whatever the index
/// says, the content of a file it names is read from the file itself.
///
/// Only the names ending in the given suffix are kept, as hashes (a description's thumbnails are not asked
/// about): a hash shared by two names makes the caller open a file that is not there, never miss one that is.
final class SpreadFolderIndex: Sendable {
    /// The names that matter (`.json`).
    private let suffix: String
    /// What is known of each folder, by path.
    private let folders = Mutex<[String: Known]>([:])
    /// How many times a folder was read (`readdir`), for tests.
    let folderReads = Atomic<Int>(0)

    /// The names kept of a folder.
    struct Names: Sendable, Equatable {
        fileprivate var hashes: Set<Int>

        /// Whether `name` may be in the folder (false: it is not).
        func contains(_ name: String) -> Bool { hashes.contains(name.hashValue) }

        /// How many names are kept.
        var count: Int { hashes.count }
    }

    /// A folder's status when this process first saw it so (monotonic milliseconds), and its names once read.
    private struct Known: Sendable {
        var status: FileStatus
        var seen: Int64
        var names: Names?
    }

    /// How long (milliseconds) a folder's status must stay the same before its listing is read and kept.
    private static let settledMilliseconds: Int64 = 2_000

    /// An index of the names ending in `suffix`.
    init(keeping suffix: String) {
        self.suffix = suffix
    }

    /// The names in `folder` now (none if it is missing), or `nil` when it was seen changed too recently to tell
    /// (or cannot be read). `checked` keeps what this pass (a listing's page, one batch of look-ups) found
    /// already, so each folder is looked at once per pass.
    func names(in folder: FilePath, checked: inout [FilePath: Names?]) -> Names? {
        if let names = checked[folder] { return names }
        let names = currentNames(in: folder)
        checked[folder] = .some(names)
        return names
    }

    /// Whether the file `name` is in `folder`, `nil` when the index cannot tell (see ``names(in:checked:)``).
    func contains(_ name: String, in folder: FilePath, checked: inout [FilePath: Names?]) -> Bool? {
        names(in: folder, checked: &checked).map { $0.contains(name) }
    }

    private func currentNames(in folder: FilePath) -> Names? {
        let status: FileStatus
        do {
            guard let found = try SystemCalls.statusIfPresent(folder) else {
                folders.withLock { _ = $0.removeValue(forKey: folder.string) }
                return Names(hashes: [])
            }
            status = found
        } catch {
            return nil
        }
        guard status.kind == .directory else { return nil }
        let now = Self.monotonicMilliseconds()
        let known = folders.withLock { folders -> Known? in
            guard let known = folders[folder.string], known.status == status, known.seen <= now else {
                folders[folder.string] = Known(status: status, seen: now, names: nil)  // (first seen so now)
                return nil
            }
            return known
        }
        guard let known else { return nil }
        if let names = known.names { return names }
        guard now - known.seen >= Self.settledMilliseconds, let entries = readEntries(of: folder),
            (try? SystemCalls.statusIfPresent(folder)) == status  // (not changed meanwhile)
        else { return nil }
        let names = Names(hashes: Set(entries.lazy.filter { $0.hasSuffix(self.suffix) }.map(\.hashValue)))
        folders.withLock { folders in
            if folders[folder.string]?.status == status { folders[folder.string]?.names = names }
        }
        return names
    }

    private func readEntries(of folder: FilePath) -> [String]? {
        folderReads.add(1, ordering: .relaxed)
        return try? SystemCalls.directoryEntries(folder)
    }

    /// Milliseconds of the monotonic clock (never stepped back).
    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
