import CFUSE
import FolioCore

/// Typed answers: each sends one `fuse_reply_*`, or fails the request with the error its body throws.
extension Reply {
    /// Answers a lookup or a create with `attributes`; `cachingName: false` keeps the kernel from caching the
    /// name (it is looked up again next time).
    public func entry(_ attributes: Attributes, cachingName: Bool = true) {
        var entry = attributes.entryParameters(cacheTimeout: cacheTimeout)
        if !cachingName { entry.entry_timeout = 0 }
        answer { fuse_reply_entry($0, &entry) }
    }

    /// Answers with the entry `body` finds or creates, or with its error.
    public func entry(of body: () throws -> Attributes) {
        do {
            entry(try body())
        } catch {
            fail(error)
        }
    }

    /// Answers `getattr` or `setattr` with `attributes`; `cached: false` keeps the kernel from caching them.
    public func attributes(_ attributes: Attributes, cached: Bool = true) {
        var value = attributes.statValue
        let timeout = cached && !attributes.isVolatile ? cacheTimeout : 0
        answer { fuse_reply_attr($0, &value, timeout) }
    }

    /// Answers with the attributes `body` returns, or with its error.
    public func attributes(cached: Bool = true, of body: () throws -> Attributes) {
        do {
            attributes(try body(), cached: cached)
        } catch {
            fail(error)
        }
    }

    /// Answers success once `body` has run, or with its error.
    public func succeed(after body: () throws -> Void) {
        do {
            try body()
            succeed()
        } catch {
            fail(error)
        }
    }

    /// Answers an `open` with the handle `opened`, built on the open's `info`; `false` if the kernel did not take
    /// it (the request was interrupted meanwhile): the handle is then the caller's to release.
    @discardableResult
    public func opened(_ opened: OpenedFile, info: FileInfo) -> Bool {
        var value = info.value(for: opened)
        var taken = false
        answer { taken = fuse_reply_open($0, &value) == 0 }
        return taken
    }

    /// Answers a `create` with the new file's `attributes` and its open handle; `false` if the kernel did not take
    /// it (the handle is then the caller's to release).
    func created(_ attributes: Attributes, _ opened: OpenedFile, info: FileInfo) -> Bool {
        var entry = attributes.entryParameters(cacheTimeout: cacheTimeout)
        var value = info.value(for: opened)
        var taken = false
        answer { taken = fuse_reply_create($0, &entry, &value) == 0 }
        return taken
    }

    /// Answers an `opendir` with the listing `handle`.
    func openedDirectory(_ handle: UInt64, cacheable: Bool, info: FileInfo) {
        var value = info.directory(handle: handle, cacheable: cacheable)
        answer { _ = fuse_reply_open($0, &value) }
    }

    /// Answers a `readlink`.
    func symlinkTarget(_ target: String) {
        answer { request in _ = target.withCString { fuse_reply_readlink(request, $0) } }
    }

    /// Answers a `read` with `count` bytes of `fd` at `offset`, spliced where the kernel can (none: end of file).
    func data(from fd: Int32, offset: Int64, count: Int64) {
        answer { request in
            if count == 0 {
                _ = fuse_reply_buf(request, nil, 0)
            } else {
                _ = cfuse_reply_fd(request, fd, off_t(offset), Int(count))
            }
        }
    }

    /// Answers a `write` that wrote `count` bytes.
    func written(_ count: Int) {
        answer { _ = fuse_reply_write($0, count) }
    }

    /// Answers an `lseek` with the offset found.
    func sought(_ offset: Int64) {
        answer { _ = fuse_reply_lseek($0, off_t(offset)) }
    }

    /// Answers a `getxattr` or `listxattr` with `bytes`, or with their size if the caller asked for it
    /// (`size` 0); `ERANGE` if they do not fit in the caller's `size`.
    func sized(_ bytes: [UInt8], size: Int) {
        if size == 0 {
            answer { _ = fuse_reply_xattr($0, bytes.count) }
        } else if bytes.count > size {
            fail(FolioError.range("attribute value of \(bytes.count) bytes"))
        } else {
            answer { request in _ = bytes.withUnsafeBytes { fuse_reply_buf(request, $0.baseAddress, $0.count) } }
        }
    }

    /// Answers a `readdir` or `readdirplus` with the entries packed in `listing`.
    func listing(_ listing: DirectoryBuffer) {
        answer { request in listing.withBytes { _ = fuse_reply_buf(request, $0.baseAddress, $0.count) } }
    }

    /// Answers a `statfs`.
    func statistics(_ numbers: FilesystemStatistics) {
        var value = statvfs()
        value.f_bsize = UInt(numbers.blockSize)
        value.f_frsize = UInt(numbers.blockSize)
        value.f_blocks = UInt(numbers.totalBlocks)
        value.f_bfree = UInt(numbers.freeBlocks)
        value.f_bavail = UInt(numbers.availableBlocks)
        value.f_files = UInt(numbers.totalFiles)
        value.f_ffree = UInt(numbers.freeFiles)
        value.f_favail = UInt(numbers.freeFiles)
        value.f_namemax = UInt(numbers.maximumNameLength)
        answer { _ = fuse_reply_statfs($0, &value) }
    }

    /// Answers a `forget` (the kernel expects no answer: this only ends the request).
    func none() {
        answer { fuse_reply_none($0) }
    }
}
