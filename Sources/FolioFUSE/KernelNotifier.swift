import CFUSE
import Dispatch
import FolioCore
import Synchronization

/// Sends cache invalidations to the kernel from its own queue, never from a request handler (a handler that
/// invalidates an entry of its own operation can deadlock the kernel).
final class KernelNotifier: KernelCacheInvalidator, @unchecked Sendable {
    private let queue = DispatchQueue(label: "folio.kernel-notifier")
    private let sessionAddress = Mutex<UInt>(0)
    /// The core's inode shown as this mount's root.
    private let rootIno: UInt64

    init(rootIno: UInt64) {
        self.rootIno = rootIno
    }

    /// The kernel's node id for a core inode (the inverse of ``FUSEMount/coreIno(_:)``); `nil` for the full
    /// view's root in an app view, which this mount never showed.
    private func nodeID(_ ino: UInt64) -> UInt64? {
        if ino == rootIno { return UInt64(FUSE_ROOT_ID) }
        if ino == UInt64(FUSE_ROOT_ID) { return nil }
        return ino
    }

    func attach(_ session: OpaquePointer) {
        sessionAddress.withLock { $0 = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(session))) }
    }

    /// Stops sending (the session is about to end); waits for queued notifications.
    func detach() {
        queue.sync {}
        sessionAddress.withLock { $0 = 0 }
    }

    func invalidateInode(_ ino: UInt64) {
        guard let ino = nodeID(ino) else { return }
        queue.async { [self] in
            sessionAddress.withLock { address in
                guard let session = OpaquePointer(bitPattern: address) else { return }
                _ = fuse_lowlevel_notify_inval_inode(session, ino, 0, 0)
            }
        }
    }

    func invalidateEntry(parent: UInt64, name: String) {
        guard let parent = nodeID(parent) else { return }
        queue.async { [self] in
            sessionAddress.withLock { address in
                guard let session = OpaquePointer(bitPattern: address) else { return }
                _ = name.withCString { fuse_lowlevel_notify_inval_entry(session, parent, $0, name.utf8.count) }
            }
        }
    }
}
