import Glibc
import FolioProviderLocal

/// `renameat2(2)` with `RENAME_NOREPLACE`: puts a finished file at its name only if nothing has that name (a Folio
/// mount refuses hard links, so `link` + `unlink` is no way to do it there).
public enum ExclusiveRename {
    /// Renames `source` to `target` unless `target` exists; the `errno` of a failure (`EEXIST`), or `nil`.
    public static func rename(_ source: String, to target: String) -> Int32? {
        let noReplace: UInt32 = 1
        return LibcExtras.renameat2(AT_FDCWD, source, AT_FDCWD, target, noReplace) == 0 ? nil : errno
    }
}
