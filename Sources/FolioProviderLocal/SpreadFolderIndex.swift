import FolioCore
import Synchronization
import SystemPackage

/// The names in the spread folders (`<two hex digits>/`) of the provider's tags and descriptions, read with one
/// `readdir` and read again only when a folder's status says it changed. Most items have neither a tags file nor
/// a description: asking this is one `lstat` per spread folder and pass (``names(in:checked:)``), where opening
/// each item's file is a failed `open` per item (a first listing of placeholders asked 3.6 times per item).
///
/// A listing is kept and used only when the folder last changed two seconds or more before it was read (file
/// times come from a clock whose resolution may be coarse, down to seconds): a name added in the same tick as the
/// `readdir` could leave the folder's times as they were. Of a folder changed more recently the index knows
/// nothing (`nil`), and the caller opens the item's file as before. Whatever the index says, the content of a
/// file it names is read from the file itself.
final class SpreadFolderIndex: Sendable {
    /// The folders' listings, by path.
    private let listings = Mutex<[String: Listing]>([:])
    /// How many times a folder was read (`readdir`), for tests.
    let folderReads = Atomic<Int>(0)

    /// A folder's names as read, with the status they were read under (an entry added, removed or renamed
    /// changes its times).
    private struct Listing: Sendable {
        var status: FileStatus
        var names: Set<String>
    }

    /// How long after a folder's last change its listing is kept (file times may be as coarse as this).
    private static let settledSeconds: Int64 = 2

    /// The names in `folder` now (none if it is missing), or `nil` when it changed too recently to tell (or
    /// cannot be read). `checked` keeps what this pass (a listing's page, one batch of look-ups) found already, so
    /// each folder is looked at once per pass.
    func names(in folder: FilePath, checked: inout [FilePath: Set<String>?]) -> Set<String>? {
        if let names = checked[folder] { return names }
        let names = currentNames(in: folder)
        checked[folder] = .some(names)
        return names
    }

    /// Whether the file `name` is in `folder`, `nil` when the index cannot tell (see ``names(in:checked:)``).
    func contains(_ name: String, in folder: FilePath, checked: inout [FilePath: Set<String>?]) -> Bool? {
        names(in: folder, checked: &checked).map { $0.contains(name) }
    }

    private func currentNames(in folder: FilePath) -> Set<String>? {
        let status: FileStatus
        do {
            guard let found = try SystemCalls.statusIfPresent(folder) else {
                listings.withLock { _ = $0.removeValue(forKey: folder.string) }
                return []
            }
            status = found
        } catch {
            return nil
        }
        guard status.kind == .directory else { return nil }
        if let kept = listings.withLock({ $0[folder.string] }), kept.status == status { return kept.names }
        let now = SystemCalls.coarseClock()
        guard status.changeTime.seconds + Self.settledSeconds <= now.seconds,
            status.modificationTime.seconds + Self.settledSeconds <= now.seconds,
            let entries = readEntries(of: folder),
            (try? SystemCalls.statusIfPresent(folder)) == status  // (not changed meanwhile)
        else {
            listings.withLock { _ = $0.removeValue(forKey: folder.string) }
            return nil
        }
        let names = Set(entries)
        listings.withLock { $0[folder.string] = Listing(status: status, names: names) }
        return names
    }

    private func readEntries(of folder: FilePath) -> [String]? {
        folderReads.add(1, ordering: .relaxed)
        return try? SystemCalls.directoryEntries(folder)
    }
}
