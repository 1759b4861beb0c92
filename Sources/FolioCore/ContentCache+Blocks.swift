import Foundation

extension ContentCache {
    /// The 512-byte blocks version file `name` takes on disk (0 if it is gone).
    public func allocatedBlocks(of name: String) -> Int64 {
        var info = stat()
        guard stat(path(of: name).string, &info) == 0 else { return 0 }
        return Int64(info.st_blocks)
    }

    /// The 512-byte blocks the open file `fd` takes on disk (0 if it cannot be asked).
    public func allocatedBlocks(of fd: Int32) -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return 0 }
        return Int64(info.st_blocks)
    }
}
