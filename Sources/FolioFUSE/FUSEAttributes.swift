import CFUSE
import FolioCore
import Glibc

extension Attributes {
    /// The attributes as a `struct stat`.
    var statValue: stat {
        var result = stat()
        result.st_ino = UInt(ino)
        result.st_mode = mode
        result.st_nlink = UInt(linkCount)
        result.st_uid = uid
        result.st_gid = gid
        result.st_size = Int(size)
        result.st_blocks = Int(blocks)
        result.st_rdev = UInt(device)
        result.st_blksize = 4096
        result.st_atim = accessTime.timespecValue
        result.st_mtim = modificationTime.timespecValue
        result.st_ctim = changeTime.timespecValue
        return result
    }

    /// The attributes as a lookup's answer, cached for `cacheTimeout` seconds unless they or the name are
    /// volatile.
    func entryParameters(cacheTimeout: Double) -> fuse_entry_param {
        var entry = fuse_entry_param()
        entry.ino = ino
        entry.generation = 1
        entry.attr = statValue
        entry.attr_timeout = isVolatile ? 0 : cacheTimeout
        entry.entry_timeout = isVolatileEntry ? 0 : cacheTimeout
        return entry
    }
}

extension Timestamp {
    init(_ value: timespec) {
        self.init(seconds: Int64(value.tv_sec), nanoseconds: Int64(value.tv_nsec))
    }
}
