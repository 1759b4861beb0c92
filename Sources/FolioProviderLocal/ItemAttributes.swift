import FolioCore

/// The extended attributes the local provider keeps on remote files and folders, and the version derived
/// from them.
enum ItemAttributes {
    /// The item id.
    static let id = "user.folio.id"
    /// The revision counter, incremented by every content change made through the provider.
    static let revision = "user.folio.rev"
    /// The permission bits asked for, when they differ from the bits on disk (the provider always keeps owner
    /// read/write, and search on folders, so it can manage its own tree).
    static let mode = "user.folio.mode"
    /// `"<version> <retry tag>"`: the content was written by the upload with that tag and had that version
    /// (set on the staged file, so it lands with the content; an edit by hand keeps it but changes the
    /// version).
    static let writtenBy = "user.folio.written-by"

    /// Bits always set on disk: `rw` for files, `rwx` for folders.
    static func ownerBits(for kind: ItemKind) -> UInt32 { kind == .directory ? 0o700 : 0o600 }

    /// The version of an item: `"<rev>-<mtime ns>-<size>"` for files (external edits change mtime or size;
    /// edits through the provider bump rev), `"<rev>-dir"` for folders (their mtime follows their children),
    /// and `"link"` for symlinks (a symlink's target never changes: a new target is a new symlink).
    static func version(kind: ItemKind, revision: UInt64, status: FileStatus) -> String {
        switch kind {
        case .directory: return "\(revision)-dir"
        case .symlink: return "link"
        default: return "\(revision)-\(status.modificationTime.totalNanoseconds)-\(status.size)"
        }
    }
}
