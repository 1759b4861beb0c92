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
    /// The file the entries are saved to.
    let path: FilePath
    /// Encoded attributes by `"<device>:<inode>"`.
    private(set) var entries: [String: String]
    /// Changes since the last save: an entry recorded, or `nil` for one forgotten.
    private var unsaved: [String: String?] = [:]
    /// The file's status when it was last read or written (`nil`: absent).
    private var loadedStatus: FileStatus?

    /// Loads the map (empty if the file does not exist yet).
    init(path: FilePath) throws {
        self.path = path
        loadedStatus = try SystemCalls.statusIfPresent(path)
        entries = try Self.load(path)
    }

    /// Reads the file again if another process saved it since it was last read.
    mutating func reloadIfChanged() throws {
        let status = try SystemCalls.statusIfPresent(path)
        guard status != loadedStatus else { return }
        var fresh = try Self.load(path)
        for (key, change) in unsaved { fresh[key] = change }
        entries = fresh
        loadedStatus = status
    }

    /// The entries saved at `path`.
    private static func load(_ path: FilePath) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path.string) else {
            if try SystemCalls.statusIfPresent(path) == nil { return [:] }
            throw FolioError.io("cannot read the id map \(path)")
        }
        do {
            return try JSONDecoder().decode([String: String].self, from: data)
        } catch {
            throw FolioError.invalidArgument("malformed id map \(path): \(error)")
        }
    }

    /// The key of an object.
    private static func key(of status: FileStatus) -> String { "\(status.device):\(status.inode)" }

    /// The attributes recorded for the object with this status, if any.
    func attributes(of status: FileStatus) -> StoredAttributes? {
        entries[Self.key(of: status)].flatMap(StoredAttributes.init(encoded:))
    }

    /// Records an object's attributes (saved by ``save()``).
    mutating func record(_ attributes: StoredAttributes, for status: FileStatus) {
        let key = Self.key(of: status)
        guard entries[key] != attributes.encoded else { return }
        entries[key] = attributes.encoded
        unsaved[key] = .some(attributes.encoded)
    }

    /// Forgets an object (saved by ``save()``).
    mutating func forget(_ status: FileStatus) {
        let key = Self.key(of: status)
        guard entries[key] != nil else { return }
        entries[key] = nil
        unsaved[key] = .some(nil)
    }

    /// Whether changes wait for ``save()``.
    var hasUnsavedChanges: Bool { !unsaved.isEmpty }

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
