import Glibc
import FolioCore
import FolioProviderLocal

/// The tags (`user.xdg.tags`) of an open file outside the mount, for `folio import` and `folio export`.
public enum FileTags {
    /// The raw value of the file's tags, or `nil` if it has none (or cannot have any).
    public static func read(_ fd: Int32) -> [UInt8]? {
        var value = [UInt8](repeating: 0, count: 4096)
        let length = LibcExtras.fgetxattr(fd, VirtualFolder.tagsAttribute, &value, value.count)
        return length > 0 ? Array(value[..<length]) : nil
    }

    /// Sets the file's tags; the `errno` of a failure (a filesystem without user attributes), or `nil`.
    public static func write(_ fd: Int32, _ value: [UInt8]) -> Int32? {
        let result = value.withUnsafeBytes {
            LibcExtras.fsetxattr(fd, VirtualFolder.tagsAttribute, $0.baseAddress, $0.count, 0)
        }
        return result == 0 ? nil : errno
    }
}
