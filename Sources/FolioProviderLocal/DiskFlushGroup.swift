import Dispatch
import FolioCore
import Foundation
import Glibc
import Synchronization
import SystemPackage

/// Makes the remote's writes durable for many uploads at once: a group commit over `syncfs`.
///
/// An upload that has written its part calls ``flush()``, which returns once a `syncfs` of the remote's
/// filesystem that *started after the call* has finished. The flushes run one at a time on a thread of their
/// own (a `syncfs` blocks for a while: on Swift's cooperative threads it would hold back every other upload),
/// and before each one the thread lingers — at most ``lingerLimit`` µs — until every upload in progress (between
/// ``uploadStarted()`` and ``uploadEnded()``) has asked for it. So a thousand small uploads in flight together
/// pay a few dozen flushes instead of two thousand `fsync`s, much as `cp -r` followed by one `sync` does.
final class DiskFlushGroup: Sendable {
    /// Uploads up to this size are made durable together; bigger ones `fsync` on their own (a `syncfs` would
    /// also write out everything else pending on the disk, such as a big version in the content cache).
    static let smallFileLimit: Int64 = 1 << 20

    /// The longest a flush waits for the uploads in progress to ask for it too, in microseconds (by default).
    static let lingerLimit = 1_000

    /// The flushing thread's side, which outlives nothing: the group stops it when it goes away.
    private let flusher: Flusher

    /// A group over the filesystem of `root`.
    convenience init(root: FilePath) throws {
        let descriptor = open(root.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCalls.lastError("open", root) }
        self.init(descriptor: descriptor) { LibcExtras.syncfs($0) }
    }

    /// A group over an open descriptor it now owns, flushed by `synchronize` (tests slow it down or make it
    /// fail), lingering at most `linger` µs.
    init(
        descriptor: Int32, linger: Int = DiskFlushGroup.lingerLimit, synchronize: @escaping @Sendable (Int32) -> Int32
    ) {
        flusher = Flusher(root: descriptor, linger: linger, synchronize: synchronize)
        let flusher = self.flusher
        let thread = Thread { flusher.run() }
        thread.name = "folio-disk-flush"
        thread.start()
    }

    deinit {
        flusher.stop()
    }

    /// How many flushes have run.
    var flushCount: UInt64 { flusher.state.withLock { $0.started } }

    /// How many callers wait for a flush.
    var waitingCount: Int { flusher.state.withLock { $0.waiters.count } }

    /// An upload that will call ``flush()`` has begun: flushes linger for it.
    func uploadStarted() {
        flusher.state.withLock { $0.active += 1 }
    }

    /// An upload counted by ``uploadStarted()`` is over.
    func uploadEnded() {
        flusher.state.withLock { $0.active -= 1 }
        flusher.wake.signal()
    }

    /// Returns once everything this process wrote before the call is on the remote's disk.
    func flush() async throws {
        let error = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            flusher.state.withLock { $0.waiters.append(Flusher.Waiter(needed: $0.started + 1, continuation)) }
            flusher.wake.signal()
        }
        guard error == 0 else { throw FolioError.system(Errno(rawValue: error), "flush the remote's disk") }
    }

    /// The state and the thread loop.
    fileprivate final class Flusher: Sendable {
        /// A caller of ``flush()``, and the first flush that covers it.
        struct Waiter {
            var needed: UInt64
            var continuation: CheckedContinuation<Int32, Never>

            init(needed: UInt64, _ continuation: CheckedContinuation<Int32, Never>) {
                self.needed = needed
                self.continuation = continuation
            }
        }

        struct State {
            /// Flushes started so far (only one runs at a time).
            var started: UInt64 = 0
            /// The last flush that failed (0: none), and its errno. `syncfs` reports a write-back error once:
            /// the flush that meets it may be one that was already running when a caller asked, so every caller
            /// whose data that flush or a later one wrote back is told.
            var lastFailed: UInt64 = 0
            var lastError: Int32 = 0
            var waiters: [Waiter] = []
            /// Uploads in progress that will ask for a flush.
            var active = 0
            var stopped = false
        }

        let state = Mutex(State())
        /// Signalled by every new waiter, every upload that ends, and ``stop()``.
        let wake = DispatchSemaphore(value: 0)
        /// A descriptor of the remote's root: `syncfs` flushes the filesystem it is on.
        private let root: Int32
        private let synchronize: @Sendable (Int32) -> Int32
        /// The longest a flush lingers, in microseconds.
        private let linger: Int

        init(root: Int32, linger: Int, synchronize: @escaping @Sendable (Int32) -> Int32) {
            self.root = root
            self.linger = linger
            self.synchronize = synchronize
        }

        func stop() {
            state.withLock { $0.stopped = true }
            wake.signal()
        }

        /// Flushes while anyone waits; ends (closing the descriptor) once stopped and nobody waits.
        func run() {
            while true {
                wake.wait()
                let (hasWaiters, stopped) = state.withLock { (!$0.waiters.isEmpty, $0.stopped) }
                if !hasWaiters {
                    if stopped { break }
                    continue
                }
                waitForUploadsInProgress()
                let generation = state.withLock { state -> UInt64 in
                    state.started += 1
                    return state.started
                }
                let error = synchronize(root) == 0 ? 0 : errno
                let covered = state.withLock { state -> [(Waiter, Int32)] in
                    if error != 0 {
                        state.lastFailed = generation
                        state.lastError = error
                    }
                    var covered: [(Waiter, Int32)] = []
                    state.waiters.removeAll { waiter in
                        guard waiter.needed <= generation else { return false }
                        let failed = state.lastFailed != 0 && state.lastFailed + 1 >= waiter.needed
                        covered.append((waiter, failed ? state.lastError : 0))
                        return true
                    }
                    return covered
                }
                for (waiter, error) in covered { waiter.continuation.resume(returning: error) }
                // Waiters that came during the flush need the next one.
                if state.withLock({ !$0.waiters.isEmpty }) { wake.signal() }
            }
            if root >= 0 { close(root) }
        }

        /// Waits until every upload in progress waits for the flush, or `linger` µs have passed.
        private func waitForUploadsInProgress() {
            let deadline = DispatchTime.now() + .microseconds(linger)
            while state.withLock({ $0.waiters.count < $0.active && !$0.stopped }) {
                if wake.wait(timeout: deadline) == .timedOut { return }
            }
        }
    }
}
