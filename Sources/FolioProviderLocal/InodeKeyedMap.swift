import FolioCore
import Foundation
import SystemPackage

/// A small JSON map from objects of the remote (keyed by device and inode, which renames and moves keep) to
/// what the provider knows of them, in one file under `DIR/.folio/` that several processes share: changes are
/// kept as unsaved until ``save()``, which merges them into the file as it is then and writes it atomically,
/// and ``reloadIfChanged()`` takes in what other processes saved. Changed only under the remote's lock
/// (``RemoteLock``). The storage of ``SymlinkIDStore`` and ``ItemIDMap``.
struct InodeKeyedMap<Value: Codable & Equatable & Sendable>: Sendable {
    /// The file the entries are saved to.
    let path: FilePath
    /// What the file holds, named in errors ("symlink id index", "id map").
    let what: String
    /// Entries by ``key(of:)``.
    private(set) var entries: [String: Value]
    /// Changes since the last save: an entry recorded, or `nil` for one forgotten.
    private var unsaved: [String: Value?] = [:]
    /// The file's status when it was last read or written (`nil`: absent).
    private var loadedStatus: FileStatus?

    /// Loads the map (empty if the file does not exist yet).
    init(path: FilePath, what: String) throws {
        self.path = path
        self.what = what
        loadedStatus = try SystemCalls.statusIfPresent(path)
        entries = try Self.load(path, what: what)
    }

    /// The key of an object.
    static func key(of status: FileStatus) -> String { "\(status.device):\(status.inode)" }

    /// The entry of the object with this status, if any.
    subscript(status: FileStatus) -> Value? { entries[Self.key(of: status)] }

    /// Whether changes wait for ``save()``.
    var hasUnsavedChanges: Bool { !unsaved.isEmpty }

    /// Reads the file again if another process saved it since it was last read (changes not saved yet stay).
    mutating func reloadIfChanged() throws {
        let status = try SystemCalls.statusIfPresent(path)
        guard status != loadedStatus else { return }
        var fresh = try Self.load(path, what: what)
        for (key, change) in unsaved { fresh[key] = change }
        entries = fresh
        loadedStatus = status
    }

    /// Records (or with `nil` forgets) the entry of an object, saved by ``save()``; nothing if it is already so.
    mutating func set(_ value: Value?, for status: FileStatus) {
        let key = Self.key(of: status)
        guard entries[key] != value else { return }
        entries[key] = value
        unsaved[key] = .some(value)
    }

    /// Applies the changes made since the last save to the file as it is now (another process may have saved
    /// its own changes meanwhile) and writes it atomically.
    mutating func save() throws {
        guard !unsaved.isEmpty else { return }
        var merged = try Self.load(path, what: what)
        for (key, change) in unsaved { merged[key] = change }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write(try encoder.encode(merged), to: path)
        entries = merged
        unsaved = [:]
        loadedStatus = try SystemCalls.statusIfPresent(path)
    }

    /// The entries saved at `path` (none if it does not exist; an error if it cannot be read or parsed).
    private static func load(_ path: FilePath, what: String) throws -> [String: Value] {
        guard let data = FileManager.default.contents(atPath: path.string) else {
            if try SystemCalls.statusIfPresent(path) == nil { return [:] }
            throw FolioError.io("cannot read the \(what) \(path)")
        }
        do {
            return try JSONDecoder().decode([String: Value].self, from: data)
        } catch {
            throw FolioError.invalidArgument("malformed \(what) \(path): \(error)")
        }
    }
}
