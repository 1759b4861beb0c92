import CFUSE

/// Who sent a request: the caller's credentials and thread, as the kernel gave them.
public struct FUSECaller: Sendable, Hashable {
    /// The caller's user id.
    public var uid: UInt32
    /// The caller's group id.
    public var gid: UInt32
    /// The calling thread's id as the kernel numbers it (not the process id; 0 for requests the kernel sends
    /// on its own).
    public var threadID: Int32

    /// The caller of `request`; nobody (all zero) if libfuse has no context for it.
    init(_ request: fuse_req_t) {
        let context = fuse_req_ctx(request)?.pointee
        uid = context?.uid ?? 0
        gid = context?.gid ?? 0
        threadID = context?.pid ?? 0
    }
}
