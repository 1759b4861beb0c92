import CFUSE
import Dispatch
import FolioCore
import Synchronization

/// Sends cache invalidations to the kernel from its own queue, in order, never from a request handler (a handler
/// that invalidates an entry of its own operation can deadlock the kernel). Remote changes to replay go to the
/// mount's front (``FUSEFront``), which has a queue of its own.
final class KernelNotifier: KernelCacheInvalidator, @unchecked Sendable {
    private let queue = DispatchQueue(label: "folio.kernel-notifier")
    private let sessionAddress = Mutex<UInt>(0)
    /// Invalidations not sent yet, in order. A burst (a commit per file of an untar) is sent by one drain on
    /// the queue instead of one queued block — and one thread wake-up — each.
    private let pending = Mutex<[PendingInvalidation]>([])
    /// The core's inode shown as this mount's root.
    private let rootIno: UInt64
    /// Hears of remote changes and of the mount's life (`nil`: nothing in front of the handlers).
    private let front: (any FUSEFront)?

    init(rootIno: UInt64, front: (any FUSEFront)?) {
        self.rootIno = rootIno
        self.front = front
    }

    /// The kernel's node id for a core inode (the inverse of ``FUSEMount/coreIno(_:)``); `nil` for the full
    /// view's root in an app view, which this mount never showed.
    private func nodeID(_ ino: UInt64) -> UInt64? {
        if ino == rootIno { return UInt64(FUSE_ROOT_ID) }
        if ino == UInt64(FUSE_ROOT_ID) { return nil }
        return ino
    }

    /// The notifiers of this process's mounts that serve a session now (every view of a state is one).
    private static let attached = Mutex<[ObjectIdentifier: KernelNotifier]>([:])

    func attach(_ session: OpaquePointer) {
        sessionAddress.withLock { $0 = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(session))) }
        Self.attached.withLock { $0[ObjectIdentifier(self)] = self }
    }

    /// Tells the front the mount is up on `device`, and how to drop a name from the kernel's caches at once.
    func mounted(device: String?) {
        front?.mounted(device: device) { [self] parent, name in invalidateEntryNow(parent: parent, name: name) }
    }

    /// Waits until every other mount has sent the invalidations queued so far, so that a change made through one
    /// view is gone from the other views' kernel caches by the time the request that made it returns. Never waits
    /// for this mount's own queue (its invalidations can need the very kernel lock the request being answered
    /// holds), and at most `limit`: two views changing one folder at once each wait for the other's kernel.
    func waitForTheOtherMounts(limit: DispatchTimeInterval = .milliseconds(200)) {
        let others = Self.attached.withLock { attached in attached.values.filter { $0 !== self } }
        guard !others.isEmpty else { return }
        let sent = DispatchGroup()
        for other in others {
            sent.enter()
            other.queue.async { sent.leave() }  // after the drains queued before it
        }
        _ = sent.wait(timeout: .now() + limit)
    }

    /// The mount is ending: the front must not wait for a request nobody serves.
    func close() {
        front?.stop()
    }

    /// Stops sending (the session is about to end). Queued work is dropped; what the front still does is not
    /// waited for: its requests end with the session.
    func detach() {
        _ = Self.attached.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
        sessionAddress.withLock { $0 = 0 }
        front?.detach()
    }

    func invalidateInode(_ ino: UInt64) {
        guard let ino = nodeID(ino) else { return }
        enqueue(.inode(ino))
    }

    func invalidateEntry(parent: UInt64, name: String) {
        enqueue(.entry(parent: parent, name: name))
    }

    /// Adds an invalidation; the first of a burst schedules the drain that sends them all.
    private func enqueue(_ invalidation: PendingInvalidation) {
        let first = pending.withLock { list in
            list.append(invalidation)
            return list.count == 1
        }
        if first { queue.async { [self] in drain() } }
    }

    /// Sends the pending invalidations in the order they came (on the notifier's queue).
    private func drain() {
        let batch = pending.withLock { list in
            defer { list = [] }
            return list
        }
        for invalidation in batch {
            switch invalidation {
            case .inode(let ino):
                sessionAddress.withLock { address in
                    guard let session = OpaquePointer(bitPattern: address) else { return }
                    _ = fuse_lowlevel_notify_inval_inode(session, ino, 0, 0)
                }
            case .entry(let parent, let name):
                invalidateEntryNow(parent: parent, name: name)
            }
        }
    }

    func replay(_ changes: [ReplayedChange]) {
        guard !changes.isEmpty else { return }
        front?.replay(changes)
    }

    /// An invalidation waiting for the notifier's queue: a kernel node id, or a folder's core inode and a name.
    private enum PendingInvalidation {
        case inode(UInt64)
        case entry(parent: UInt64, name: String)
    }

    /// Invalidates an entry now (from the notifier's queue or the front's, never from a request handler).
    private func invalidateEntryNow(parent: UInt64, name: String) {
        guard let parent = nodeID(parent) else { return }
        sessionAddress.withLock { address in
            guard let session = OpaquePointer(bitPattern: address) else { return }
            _ = name.withCString { fuse_lowlevel_notify_inval_entry(session, parent, $0, name.utf8.count) }
        }
    }
}
