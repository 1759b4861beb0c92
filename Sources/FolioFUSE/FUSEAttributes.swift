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
}

extension Timestamp {
    init(_ value: timespec) {
        self.init(seconds: Int64(value.tv_sec), nanoseconds: Int64(value.tv_nsec))
    }
}
