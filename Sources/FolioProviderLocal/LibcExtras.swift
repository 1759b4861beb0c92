import Glibc

/// C library functions that Glibc's Swift module does not export (`<sys/xattr.h>`, `renameat2`, `syncfs`;
/// `copy_file_range` is FolioCore's `SparseFile`'s), resolved once
/// by name from the already loaded C library. Each has exactly the C signature of its man page.
///
/// A small C system-library target would be the tidier home for these; this keeps the provider free of a
/// build change.
package enum LibcExtras {
    /// `ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)`.
    typealias GetAttribute = @convention(c) (
        UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int
    ) -> Int
    /// `ssize_t fgetxattr(int fd, const char *name, void *value, size_t size)`.
    package typealias GetDescriptorAttribute = @convention(c) (
        Int32, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int
    ) -> Int
    /// `int lsetxattr(const char *path, const char *name, const void *value, size_t size, int flags)`.
    typealias SetAttribute = @convention(c) (
        UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32
    ) -> Int32
    /// `int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)`.
    package typealias SetDescriptorAttribute = @convention(c) (
        Int32, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32
    ) -> Int32
    /// `int lremovexattr(const char *path, const char *name)`.
    typealias RemoveAttribute = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
    /// `int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags)`.
    package typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32

    /// `int syncfs(int fd)`.
    typealias SyncFileSystem = @convention(c) (Int32) -> Int32

    /// `syncfs(2)`.
    static let syncfs: SyncFileSystem = resolve("syncfs")
    /// `lgetxattr(2)`.
    static let lgetxattr: GetAttribute = resolve("lgetxattr")
    /// `fgetxattr(2)`.
    package static let fgetxattr: GetDescriptorAttribute = resolve("fgetxattr")
    /// `lsetxattr(2)`.
    static let lsetxattr: SetAttribute = resolve("lsetxattr")
    /// `fsetxattr(2)`.
    package static let fsetxattr: SetDescriptorAttribute = resolve("fsetxattr")
    /// `lremovexattr(2)`.
    static let lremovexattr: RemoveAttribute = resolve("lremovexattr")
    /// `renameat2(2)`.
    package static let renameat2: RenameAt2 = resolve("renameat2")

    /// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`, the same on every Linux architecture Swift runs on): a macro
    /// built of macros, which Glibc's module does not export.
    static let unnamedFileFlag: Int32 = 0o20000000 | O_DIRECTORY

    /// Looks a C library function up by name; every glibc since 2.28 has all of them.
    private static func resolve<Function>(_ symbol: String) -> Function {
        guard let address = dlsym(dlopen(nil, RTLD_NOW), symbol) else {
            fatalError("the C library lacks \(symbol)")
        }
        return unsafeBitCast(address, to: Function.self)
    }
}
