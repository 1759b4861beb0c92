import FolioCore
import Foundation
import SystemPackage

/// Ids of symlinks, which cannot carry `user.` xattrs on Linux, kept in `DIR/.folio/symlink-ids.json`.
///
/// Entries are keyed by device and inode, which a rename or move inside the remote keeps, and also record the
/// symlink's target: a symlink's target never changes, so an entry whose target differs belongs to an earlier
/// symlink whose inode was reused, and is not trusted. Entries of symlinks deleted through the provider are
/// removed; those of symlinks deleted by hand stay (a few bytes each; an inode reused by a symlink with the same
/// target gets the old id back, which is harmless: it is indistinguishable from the old symlink).
struct SymlinkIDStore: Sendable {
    /// One symlink's identity.
    struct Entry: Codable, Hashable, Sendable {
        /// The item id.
        var id: String
        /// The target the symlink had when the id was recorded.
        var target: String
    }

    /// The file the entries are saved to.
    let path: FilePath
    /// Entries by `"<device>:<inode>"`.
    private(set) var entries: [String: Entry]
    /// Changes since the last save: an entry recorded, or `nil` for one forgotten.
    private var unsaved: [String: Entry?] = [:]
    /// The file's status when it was last read or written (`nil`: absent).
    private var loadedStatus: FileStatus?

    /// Loads the store (empty if the file does not exist yet).
    init(path: FilePath) throws {
        self.path = path
        loadedStatus = try SystemCalls.statusIfPresent(path)
        entries = try Self.load(path)
    }

    /// Reads the file again if another process (or another remote tree) saved it since it was last read.
    mutating func reloadIfChanged() throws {
        let status = try SystemCalls.statusIfPresent(path)
        guard status != loadedStatus else { return }
        var fresh = try Self.load(path)
        for (key, change) in unsaved { fresh[key] = change }
        entries = fresh
        loadedStatus = status
    }

    /// The entries saved at `path`.
    private static func load(_ path: FilePath) throws -> [String: Entry] {
        guard let data = FileManager.default.contents(atPath: path.string) else { return [:] }
        do {
            return try JSONDecoder().decode([String: Entry].self, from: data)
        } catch {
            throw FolioError.invalidArgument("malformed symlink id index \(path): \(error)")
        }
    }

    /// The key of a symlink.
    static func key(of status: FileStatus) -> String { "\(status.device):\(status.inode)" }

    /// The id recorded for the symlink with this status and target, if any.
    func id(of status: FileStatus, target: String) -> ItemID? {
        guard let entry = entries[Self.key(of: status)], entry.target == target else { return nil }
        return ItemID(entry.id)
    }

    /// Records a symlink's id (saved by ``save()``).
    mutating func record(_ id: ItemID, status: FileStatus, target: String) {
        let entry = Entry(id: id.rawValue, target: target)
        entries[Self.key(of: status)] = entry
        unsaved[Self.key(of: status)] = .some(entry)
    }

    /// Forgets a symlink (saved by ``save()``).
    mutating func forget(_ status: FileStatus) {
        entries[Self.key(of: status)] = nil
        unsaved[Self.key(of: status)] = .some(nil)
    }

    /// Applies the changes made since the last save to the file as it is now (another process may have saved
    /// its own changes meanwhile) and writes it atomically.
    mutating func save() throws {
        guard !unsaved.isEmpty else { return }
        var merged = try Self.load(path)
        for (key, change) in unsaved { merged[key] = change }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write(try encoder.encode(merged), to: path)
        entries = merged
        unsaved = [:]
        loadedStatus = try SystemCalls.statusIfPresent(path)
    }
}
