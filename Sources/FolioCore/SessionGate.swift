import Glibc

/// The lock of one write session's content, so that its I/O runs outside the core's state lock.
///
/// Writes into the session's file hold it shared (several threads of the owning process write at once); what
/// must see the file still (a commit, which makes the file an immutable version, and the copy that makes a
/// committed file writable again) holds it exclusive. Writer-preferring, so a stream of writes cannot starve a
/// commit.
///
/// Lock order (written once, here): a session gate is taken before the core's state lock (`FolioFileSystem.state`)
/// and never while holding it; the state lock is taken and released inside, for bookkeeping only, and no I/O of
/// the session's content runs under the state lock. One gate at a time: no code holds two sessions' gates.
final class SessionGate: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    /// A new, open gate.
    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with the gate held shared (a write into the session's file).
    func shared<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` with the gate held exclusive (no write of the session runs meanwhile).
    func exclusive<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
