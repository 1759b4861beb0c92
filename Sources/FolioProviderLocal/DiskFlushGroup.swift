import FolioCore
import Glibc
import Synchronization
import SystemPackage

/// Makes the remote's writes durable for many uploads at once: a group commit over `syncfs`.
///
/// An upload that has written its part calls ``flush()``, which returns once a `syncfs` of the remote's
/// filesystem that *started after the call* has finished. Uploads that call while a flush runs share the next
/// one, so a thousand small uploads in flight together pay a few dozen flushes instead of a thousand `fsync`s
/// (what `cp -r` followed by one `sync` pays).
final class DiskFlushGroup: Sendable {
    /// Uploads up to this size are made durable together; bigger ones `fsync` on their own (a `syncfs` would
    /// also write out everything else pending on the disk, such as a big version in the content cache).
    static let smallFileLimit: Int64 = 1 << 20

    private struct State {
        /// Flushes started so far (only one runs at a time).
        var started: UInt64 = 0
        /// Flushes finished so far.
        var finished: UInt64 = 0
        var running = false
        /// The last flush that failed (0: none), and its errno. `syncfs` reports a write-back error once: the
        /// flush that meets it may be one that was already running when a caller asked, so every caller whose
        /// data that flush or a later one wrote back is told.
        var lastFailed: UInt64 = 0
        var lastError: Int32 = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// A descriptor of the remote's root: `syncfs` flushes the filesystem it is on.
    private let root: Int32
    /// `syncfs` (tests slow it down or make it fail).
    private let synchronize: @Sendable (Int32) -> Int32

    init(root: FilePath) throws {
        let descriptor = open(root.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCalls.lastError("open", root) }
        self.root = descriptor
        synchronize = { LibcExtras.syncfs($0) }
    }

    /// A group over an open descriptor it now owns, flushed by `synchronize` (for tests).
    init(descriptor: Int32, synchronize: @escaping @Sendable (Int32) -> Int32) {
        root = descriptor
        self.synchronize = synchronize
    }

    /// How many flushes have run.
    var flushCount: UInt64 { state.withLock { $0.started } }

    deinit {
        if root >= 0 { close(root) }
    }

    /// Returns once everything this process wrote before the call is on the remote's disk.
    func flush() async throws {
        let needed = state.withLock { $0.started + 1 }
        while true {
            enum Step {
                case done(Int32)
                case run(UInt64)
                case wait
            }
            let step: Step = state.withLock { state in
                if state.finished >= needed {
                    return .done(state.lastFailed != 0 && state.lastFailed + 1 >= needed ? state.lastError : 0)
                }
                if state.running { return .wait }
                state.running = true
                state.started += 1
                return .run(state.started)
            }
            switch step {
            case .done(let error):
                guard error == 0 else {
                    throw FolioError.system(Errno(rawValue: error), "flush the remote's disk")
                }
                return
            case .run(let generation):
                let error = synchronize(root) == 0 ? 0 : errno
                let waiters = state.withLock { state in
                    state.finished = generation
                    state.running = false
                    if error != 0 {
                        state.lastFailed = generation
                        state.lastError = error
                    }
                    defer { state.waiters = [] }
                    return state.waiters
                }
                waiters.forEach { $0.resume() }
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state -> Bool in
                        if !state.running || state.finished >= needed { return true }
                        state.waiters.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
        }
    }
}
