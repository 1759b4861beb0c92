import CFUSE
import FolioCore

/// A copy of the kernel's `fuse_file_info` for an open, which outlives the callback: a deferred answer to an
/// `open`, `opendir` or `create` is built from it.
public struct FileInfo: @unchecked Sendable {
    private let raw: fuse_file_info

    init(_ raw: fuse_file_info) { self.raw = raw }

    /// The open's flags (`O_RDONLY`, `O_TRUNC`, …).
    public var flags: Int32 { raw.flags }

    /// The answer to an `opendir` with the listing `handle`.
    func directory(handle: UInt64, cacheable: Bool) -> fuse_file_info {
        var info = raw
        info.fh = handle
        info.cache_readdir = cacheable ? 1 : 0
        info.keep_cache = cacheable ? 1 : 0
        return info
    }

    /// The answer to an `open` or a `create` that opened `opened`.
    func value(for opened: OpenedFile) -> fuse_file_info {
        var info = raw
        info.fh = opened.handle
        info.noflush = opened.isReadOnly ? 1 : 0
        switch opened.cachePolicy {
        case .keepCache:
            info.keep_cache = 1
            info.direct_io = 0
        case .freshCache:
            info.keep_cache = 0
            info.direct_io = 0
        case .directIO:
            info.keep_cache = 0
            info.direct_io = 1
        }
        return info
    }
}
