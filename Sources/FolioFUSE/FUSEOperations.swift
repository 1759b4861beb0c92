import CFUSE
import FolioCore

/// The libfuse low-level operations table: one line per operation, which copies and checks its C arguments
/// into a typed ``FUSERequest`` (``CArguments``) and serves it (``FUSEMount/serve(_:_:_:)``): the mount's front
/// first, then the operation's handler (``FUSEHandlers``). The closures are built here, in a nonisolated
/// function, and call only file-level functions (a reference to a static member would capture the type, which a C
/// function pointer cannot): a C callback made in main-actor code would trap on the first call from a libfuse
/// thread.
enum FUSEOperations {
    static func table() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, connection in negotiate(userdata, connection) }
        ops.lookup = { r, parent, name in serve(r, "lookup") { .lookup(try $0.existing(parent, name)) } }
        ops.forget = { r, ino, n in serve(r, "forget") { .forget([.init(ino: $0.node(ino), count: n)]) } }
        ops.forget_multi = { r, n, items in serve(r, "forget_multi") { .forget($0.forgets(n, items)) } }
        ops.getattr = { r, ino, fi in serve(r, "getattr") { .getAttributes(ino: $0.node(ino), handle: $0.handle(fi)) } }
        ops.setattr = { r, ino, a, set, fi in serve(r, "setattr") { .setAttributes(try .init($0, ino, a, set, fi)) } }
        ops.readlink = { r, ino in serve(r, "readlink") { .readSymlink(ino: $0.node(ino)) } }
        ops.mknod = { r, p, name, mode, dev in serve(r, "mknod") { .makeNode(try .init($0, p, name, mode, dev)) } }
        ops.mkdir = { r, p, name, mode in serve(r, "mkdir") { .makeDirectory(try .init($0, p, name, mode)) } }
        ops.symlink = { r, to, p, name in
            serve(r, "symlink") { .makeSymlink(at: try $0.new(p, name), target: try $0.newName(to)) } }
        ops.unlink = { r, parent, name in serve(r, "unlink") { .unlink(try $0.existing(parent, name)) } }
        ops.rmdir = { r, parent, name in serve(r, "rmdir") { .removeDirectory(try $0.existing(parent, name)) } }
        ops.rename = { r, p, n, p2, n2, flags in serve(r, "rename") { .rename(try .init($0, p, n, p2, n2, flags)) } }
        ops.link = { r, ino, p, name in serve(r, "link") { .link(ino: $0.node(ino), at: try $0.new(p, name)) } }
        ops.open = { r, ino, fi in serve(r, "open") { .open(try .init($0, ino, fi)) } }
        ops.create = { r, p, name, mode, fi in serve(r, "create") { .create(try .init($0, p, name, mode, fi)) } }
        ops.read = { r, _, size, at, fi in serve(r, "read") { .read(try .init($0, size, at, fi)) } }
        ops.write = { r, _, bytes, size, at, fi in serve(r, "write") { .write(try .init($0, bytes, size, at, fi)) } }
        ops.flush = { r, _, fi in serve(r, "flush") { .flush(handle: try $0.openHandle(fi)) } }
        ops.release = { r, _, fi in serve(r, "release") { .release(handle: try $0.openHandle(fi)) } }
        ops.fsync = { r, _, _, fi in serve(r, "fsync") { .synchronize(handle: try $0.openHandle(fi)) } }
        ops.fallocate = { r, _, mode, at, n, fi in serve(r, "fallocate") { .allocate(try .init($0, mode, at, n, fi)) } }
        ops.lseek = { r, _, at, whence, fi in serve(r, "lseek") { .seek(try .init($0, at, whence, fi)) } }
        ops.opendir = { r, ino, fi in serve(r, "opendir") { .openDirectory(try .init($0, ino, fi)) } }
        ops.readdir = { r, _, n, at, fi in serve(r, "readdir") { .readDirectory(try .init($0, n, at, fi)) } }
        ops.readdirplus = { r, _, n, at, fi in
            serve(r, "readdirplus") { .readDirectory(try .init($0, n, at, fi, plus: true)) } }
        ops.releasedir = { r, _, fi in serve(r, "releasedir") { .releaseDirectory(handle: try $0.openHandle(fi)) } }
        ops.fsyncdir = { r, _, _, _ in serve(r, "fsyncdir") { _ in .synchronizeDirectory } }
        ops.statfs = { r, _ in serve(r, "statfs") { _ in .statistics } }
        ops.setxattr = { r, ino, name, v, n, flags in
            serve(r, "setxattr") { .setExtendedAttribute(try .init($0, ino, name, v, n, flags)) } }
        ops.getxattr = { r, ino, name, n in
            serve(r, "getxattr") { .extendedAttribute(ino: $0.node(ino), name: try $0.attributeName(name), size: n) } }
        ops.listxattr = { r, ino, n in serve(r, "listxattr") { .extendedAttributeNames(ino: $0.node(ino), size: n) } }
        ops.removexattr = { r, ino, name in
            serve(r, "removexattr") { .removeExtendedAttribute(ino: $0.node(ino), name: try $0.attributeName(name)) } }
        return ops
    }
}

/// Serves one request of the mount whose user data it carries; a request without one is answered `EIO`.
private func serve(_ request: fuse_req_t?, _ operation: StaticString, _ convert: (CArguments) throws -> FUSERequest) {
    guard let request else { return }
    guard let userdata = fuse_req_userdata(request) else {
        fuse_reply_err(request, EIO)
        return
    }
    Unmanaged<FUSEMount>.fromOpaque(userdata).takeUnretainedValue().serve(request, operation, convert)
}

/// `init`: what the mount asks of the kernel.
private func negotiate(_ userdata: UnsafeMutableRawPointer?, _ connection: UnsafeMutablePointer<fuse_conn_info>?) {
    guard let connection else { return }
    let wanted = UInt32(FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE
        | FUSE_CAP_PARALLEL_DIROPS | FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_ASYNC_READ)
    connection.pointee.want |= wanted & connection.pointee.capable
    // No writeback cache, and no atomic O_TRUNC: truncation arrives as a setattr whose reply sets the
    // kernel's size, so a reader of an older version is never cut short by a writer's truncate.
    connection.pointee.want &= ~UInt32(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_ATOMIC_O_TRUNC)
    connection.pointee.max_write = 1 << 20
    // The kernel caps the mount's readahead at this (and at the backing device's setting, which
    // FUSEMount raises where it may): several 1 MiB reads in flight during a sequential scan.
    let readahead = userdata.map { Unmanaged<FUSEMount>.fromOpaque($0).takeUnretainedValue().options.readaheadKiB }
    connection.pointee.max_readahead = UInt32(max(1 << 20, (readahead ?? 0) << 10))
    connection.pointee.max_background = 64
}
