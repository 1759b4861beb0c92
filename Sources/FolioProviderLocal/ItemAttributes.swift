import FolioCore

/// How the local provider maps an item's state on disk to what it reports (its attributes on disk are
/// ``StoredAttributes``).
enum ItemAttributes {
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
