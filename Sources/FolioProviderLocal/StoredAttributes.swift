import FolioCore
import SystemPackage

/// What the local provider keeps on a remote file or folder: its id, its revision, the permission bits asked
/// for (when they differ from the bits on disk) and the stamp of the upload that wrote it.
///
/// All of it is one extended attribute, `user.folio` = `"<rev> <mode> <stamp> <id>"` (`-` for an absent mode or
/// stamp; the mode in octal, the stamp in hex; the id last, as it is), about 60 bytes: ext4 keeps that much in
/// the inode itself, while more (the four attributes this replaced) costs every file an attribute block on disk
/// — a second block to allocate, write and flush for each small upload. Objects written before it carry
/// `user.folio.id`, `user.folio.rev`, `user.folio.mode` and `user.folio.written-by`; they are still read, and
/// the next change through the provider writes `user.folio`.
struct StoredAttributes: Equatable, Sendable {
    /// The item id.
    var id: ItemID?
    /// Incremented by every content change made through the provider.
    var revision: UInt64 = 0
    /// The permission bits asked for, when they differ from the bits on disk (the provider always keeps owner
    /// read/write, and search on folders, so it can manage its own tree).
    var mode: UInt32?
    /// ``stamp(version:retryTag:)`` of the upload that wrote the content and the version it had then (set on
    /// the staged file, so it lands with the content; an edit by hand changes the version and no longer
    /// matches).
    var stamp: UInt64?

    /// The attribute's name.
    static let name = "user.folio"

    /// The attributes written before ``name`` existed, still read.
    enum Legacy {
        static let id = "user.folio.id"
        static let revision = "user.folio.rev"
        static let mode = "user.folio.mode"
        /// `"<version> <retry tag>"`.
        static let writtenBy = "user.folio.written-by"
    }

    /// Attributes with the given values.
    init(id: ItemID? = nil, revision: UInt64 = 0, mode: UInt32? = nil, stamp: UInt64? = nil) {
        self.id = id
        self.revision = revision
        self.mode = mode
        self.stamp = stamp
    }

    /// Decodes a `user.folio` value; `nil` if it is malformed.
    init?(encoded: String) {
        let fields = encoded.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4, let revision = UInt64(fields[0]) else { return nil }
        self.revision = revision
        if fields[1] != "-" {
            guard let mode = UInt32(fields[1], radix: 8) else { return nil }
            self.mode = mode
        }
        if fields[2] != "-" {
            guard let stamp = UInt64(fields[2], radix: 16) else { return nil }
            self.stamp = stamp
        }
        id = fields[3].isEmpty ? nil : ItemID(String(fields[3]))
    }

    /// The `user.folio` value.
    var encoded: String {
        let mode = self.mode.map { String($0, radix: 8) } ?? "-"
        let stamp = self.stamp.map { String($0, radix: 16) } ?? "-"
        return "\(revision) \(mode) \(stamp) \(id?.rawValue ?? "")"
    }

    /// The stamp of an upload tagged `retryTag` that left its item at `version` (FNV-1a, 64 bits: stable across
    /// processes and machines, unlike Swift's hashing).
    static func stamp(version: String, retryTag: String) -> UInt64 {
        StableHash.fnv1a("\(version) \(retryTag)")
    }

    /// Whether the upload tagged `retryTag` wrote the content this item has at `version`.
    func isWrite(by retryTag: String?, version: String) -> Bool {
        guard let retryTag, let stamp else { return false }
        return stamp == Self.stamp(version: version, retryTag: retryTag)
    }

    // MARK: Reading and writing

    /// The attributes of `path` itself (empty for an object that has none, or cannot carry any, like a
    /// symlink).
    static func read(_ path: FilePath) throws -> StoredAttributes {
        try read { try SystemCalls.extendedAttribute($0, of: path) }
    }

    /// The attributes of an open file.
    static func read(_ descriptor: FileDescriptor, path: FilePath) throws -> StoredAttributes {
        try read { try SystemCalls.extendedAttribute($0, of: descriptor, path: path) }
    }

    /// Reads `user.folio`, or the legacy attributes where it is absent.
    private static func read(_ attribute: (String) throws -> String?) throws -> StoredAttributes {
        if let value = try attribute(name), let attributes = StoredAttributes(encoded: value) {
            return attributes
        }
        var attributes = StoredAttributes()
        guard let id = try attribute(Legacy.id), !id.isEmpty else { return attributes }
        attributes.id = ItemID(id)
        attributes.revision = try attribute(Legacy.revision).flatMap { UInt64($0) } ?? 0
        attributes.mode = try attribute(Legacy.mode).flatMap { UInt32($0, radix: 8) }
        if let writtenBy = try attribute(Legacy.writtenBy), let space = writtenBy.firstIndex(of: " ") {
            attributes.stamp = stamp(
                version: String(writtenBy[..<space]), retryTag: String(writtenBy[writtenBy.index(after: space)...]))
        }
        return attributes
    }

    /// Writes the attributes on `path` itself; `onlyIfAbsent` fails with `.exists` if it already has some
    /// (another process gave it an id first).
    func write(to path: FilePath, onlyIfAbsent: Bool = false) throws {
        try SystemCalls.setExtendedAttribute(Self.name, encoded, of: path, onlyIfAbsent: onlyIfAbsent)
    }

    /// Writes the attributes on an open file.
    func write(to descriptor: FileDescriptor, path: FilePath) throws {
        try SystemCalls.setExtendedAttribute(Self.name, encoded, of: descriptor, path: path)
    }
}
