import CFUSE
import FolioCore

/// Copies and checks the C arguments of one request into Swift values. Nothing is force-unwrapped: a missing
/// pointer or a name that is not UTF-8 throws the ``FolioError`` the request is then answered with.
struct CArguments {
    /// The core's inode shown as the mount's root.
    let rootIno: UInt64

    /// The core's inode for a kernel node id: the kernel calls the mount's root 1 (`FUSE_ROOT_ID`) whatever the
    /// view; every other node id is the core's inode itself. The full view's root, the only other inode the
    /// swap could touch, is never reachable from an app view, so the mapping is one to one.
    func node(_ ino: fuse_ino_t) -> UInt64 {
        ino == FUSE_ROOT_ID ? rootIno : ino
    }

    /// A name the kernel passed, as a string. Folio stores names as UTF-8 and nothing else: a name whose bytes
    /// are not UTF-8 would be repaired by `String(cString:)` into another name (two such names onto one item),
    /// so instead `error` is thrown. A missing name is an invalid argument.
    func name(_ raw: UnsafePointer<CChar>?, orFail error: (String) -> FolioError) throws(FolioError) -> String {
        guard let raw else { throw .invalidArgument("the kernel passed no name") }
        if let name = String(validatingCString: raw) { return name }
        throw error("the name is not valid UTF-8; Folio stores only UTF-8 names")
    }

    /// The name of an item that may exist: no item has a name that is not UTF-8 (`ENOENT`).
    func existingName(_ raw: UnsafePointer<CChar>?) throws(FolioError) -> String {
        try name(raw) { .notFound($0) }
    }

    /// The name of an item to create or rename to (or a symlink's target): one that is not UTF-8 is refused
    /// (`EINVAL`).
    func newName(_ raw: UnsafePointer<CChar>?) throws(FolioError) -> String {
        try name(raw) { .invalidArgument($0) }
    }

    /// The name of an extended attribute to read or remove: one that is not UTF-8 does not exist (`ENODATA`).
    func attributeName(_ raw: UnsafePointer<CChar>?) throws(FolioError) -> String {
        try name(raw) { .noAttribute($0) }
    }

    /// `name` in the folder `parent`, for a lookup or a removal.
    func existing(_ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?) throws(FolioError) -> FUSERequest.Name {
        FUSERequest.Name(parent: node(parent), name: try existingName(name))
    }

    /// `name` in the folder `parent`, for an item to create.
    func new(_ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?) throws(FolioError) -> FUSERequest.Name {
        FUSERequest.Name(parent: node(parent), name: try newName(name))
    }

    /// A copy of the request's file information (an open's flags, a handle).
    func fileInfo(_ raw: UnsafeMutablePointer<fuse_file_info>?) throws(FolioError) -> FileInfo {
        guard let raw else { throw .io("the kernel passed no file information") }
        return FileInfo(raw.pointee)
    }

    /// The open handle the request is about.
    func openHandle(_ raw: UnsafeMutablePointer<fuse_file_info>?) throws(FolioError) -> UInt64 {
        guard let raw else { throw .badHandle("the kernel passed no file handle") }
        return raw.pointee.fh
    }

    /// The handle the kernel passed where it is optional (`getattr`, `setattr`).
    func handle(_ raw: UnsafeMutablePointer<fuse_file_info>?) -> UInt64? {
        raw.map { $0.pointee.fh }
    }

    /// The references `forget_multi` drops; none if the kernel passed no list.
    func forgets(_ count: Int, _ items: UnsafeMutablePointer<fuse_forget_data>?) -> [FUSERequest.Forget] {
        guard let items, count > 0 else { return [] }
        return UnsafeBufferPointer(start: items, count: count).map {
            FUSERequest.Forget(ino: node($0.ino), count: $0.nlookup)
        }
    }

    /// The bytes of a buffer the kernel passed (`write`, `setxattr`); an empty one if it passed none with size 0.
    func bytes(_ raw: UnsafeRawPointer?, _ count: Int) throws(FolioError) -> UnsafeRawBufferPointer {
        guard let raw else {
            guard count == 0 else { throw .invalidArgument("the kernel passed no buffer for \(count) bytes") }
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: raw, count: count)
    }
}
