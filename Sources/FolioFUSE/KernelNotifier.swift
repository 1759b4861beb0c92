import CFUSE
import Dispatch
import FolioCore
import Synchronization

/// Sends cache invalidations to the kernel, and replays remote changes through the mount, from its own queue,
/// in order, never from a request handler (a handler that invalidates an entry of its own operation can
/// deadlock the kernel, and one that makes a system call on its own mount waits for itself).
final class KernelNotifier: KernelCacheInvalidator, @unchecked Sendable {
    private let queue = DispatchQueue(label: "folio.kernel-notifier")
    /// Replays wait for the helper: on a queue of their own, so they never hold up an invalidation.
    private let replayQueue = DispatchQueue(label: "folio.change-replayer")
    private let sessionAddress = Mutex<UInt>(0)
    /// Invalidations not sent yet, in order. A burst (a commit per file of an untar) is sent by one drain on
    /// the queue instead of one queued block — and one thread wake-up — each.
    private let pending = Mutex<[PendingInvalidation]>([])
    /// Remote changes not replayed yet, in order: a burst (a folder's first listing of 10,000 new files) is
    /// replayed by one drain, which lets the replayer hand the helper many operations at once.
    private let pendingReplays = Mutex<[ReplayedChange]>([])
    /// The core's inode shown as this mount's root.
    private let rootIno: UInt64
    /// Replays remote changes through the mount (`nil`: not replayed).
    let replayer: ChangeReplayer?

    init(rootIno: UInt64, replayer: ChangeReplayer?) {
        self.rootIno = rootIno
        self.replayer = replayer
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

    /// Starts no more replays (the mount is ending: a replay now could wait for a request nobody serves).
    func close() {
        replayer?.stop()
    }

    /// Stops sending (the session is about to end). Queued work is dropped; a replay still running is not
    /// waited for: its requests end with the session.
    func detach() {
        close()
        _ = Self.attached.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
        sessionAddress.withLock { $0 = 0 }
        if let replayer { replayQueue.async { replayer.finish() } }
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
        guard let replayer, !changes.isEmpty else { return }
        let first = pendingReplays.withLock { list in
            list += changes
            return list.count == changes.count
        }
        guard first else { return }
        replayQueue.async { [self] in
            let changes = pendingReplays.withLock { list in
                defer { list = [] }
                return list
            }
            guard sessionAddress.withLock({ $0 != 0 }) else { return }
            replayer.perform(changes) { parent, name in invalidateEntryNow(parent: parent, name: name) }
        }
    }

    /// An invalidation waiting for the notifier's queue: a kernel node id, or a folder's core inode and a name.
    private enum PendingInvalidation {
        case inode(UInt64)
        case entry(parent: UInt64, name: String)
    }

    /// Invalidates an entry now (from one of the notifier's queues, never from a request handler).
    private func invalidateEntryNow(parent: UInt64, name: String) {
        guard let parent = nodeID(parent) else { return }
        sessionAddress.withLock { address in
            guard let session = OpaquePointer(bitPattern: address) else { return }
            _ = name.withCString { fuse_lowlevel_notify_inval_entry(session, parent, $0, name.utf8.count) }
        }
    }
}
