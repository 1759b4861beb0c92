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

    /// The entries by object.
    private var map: InodeKeyedMap<Entry>

    /// Loads the store (empty if the file does not exist yet).
    init(path: FilePath) throws {
        map = try InodeKeyedMap(path: path, what: "symlink id index")
    }

    /// Reads the file again if another process (or another remote tree) saved it since it was last read.
    mutating func reloadIfChanged() throws { try map.reloadIfChanged() }

    /// The id recorded for the symlink with this status and target, if any.
    func id(of status: FileStatus, target: String) -> ItemID? {
        guard let entry = map[status], entry.target == target else { return nil }
        return ItemID(entry.id)
    }

    /// Records a symlink's id (saved by ``save()``).
    mutating func record(_ id: ItemID, status: FileStatus, target: String) {
        map.set(Entry(id: id.rawValue, target: target), for: status)
    }

    /// Forgets a symlink (saved by ``save()``).
    mutating func forget(_ status: FileStatus) { map.set(nil, for: status) }

    /// Merges the changes since the last save into the file and writes it atomically.
    mutating func save() throws { try map.save() }
}
