import FolioCore
import Foundation
import SystemPackage

/// What an adopted folder (``RemoteLayout/isAdopted``) knows of its files and folders beyond what the file system
/// says, kept in `DIR/.folio/item-ids.json` instead of extended attributes on the user's items (tools strip
/// them, and Folio writes nothing into the user's items until something changes through the mount).
///
/// An item without an entry has the id derived from its inode (``RemoteTree/derivedID(of:)``), revision 0 and the
/// mode on disk. Entries are made for what changes through Folio: a file whose content Folio replaced (a new
/// inode, which must keep the item's id), an item Folio created (the id the client chose), a mode Folio set.
/// They are keyed by device and inode, which renames and moves keep, and hold the ``StoredAttributes`` value
/// (`"<rev> <mode> <stamp> <id>"`). Entries of items deleted through Folio are removed; an entry of an item
/// deleted by hand stays until its inode is reused (then the new file takes the old id, as a derived id would).
///
/// Changed only under the remote's lock (``RemoteLock``); every change is saved before the lock is let go,
/// merged with what other processes saved meanwhile.
struct ItemIDMap: Sendable {
    /// The entries: encoded attributes by object.
    private var map: InodeKeyedMap<String>

    /// Loads the map (empty if the file does not exist yet).
    init(path: FilePath) throws {
        map = try InodeKeyedMap(path: path, what: "id map")
    }

    /// The file the entries are saved to.
    var path: FilePath { map.path }

    /// Reads the file again if another process saved it since it was last read.
    mutating func reloadIfChanged() throws { try map.reloadIfChanged() }

    /// The attributes recorded for the object with this status, if any.
    func attributes(of status: FileStatus) -> StoredAttributes? {
        map[status].flatMap(StoredAttributes.init(encoded:))
    }

    /// Records an object's attributes (saved by ``save()``).
    mutating func record(_ attributes: StoredAttributes, for status: FileStatus) {
        map.set(attributes.encoded, for: status)
    }

    /// Forgets an object (saved by ``save()``).
    mutating func forget(_ status: FileStatus) { map.set(nil, for: status) }

    /// Whether changes wait for ``save()``.
    var hasUnsavedChanges: Bool { map.hasUnsavedChanges }

    /// Merges the changes since the last save into the file and writes it atomically.
    mutating func save() throws { try map.save() }
}
