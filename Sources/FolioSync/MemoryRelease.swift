import Foundation
import Synchronization

/// Gives the memory a burst of work freed back to the system, a moment after the burst. A listing of many folders
/// (a `find` of the tree) allocates and frees a folder's worth of items at a time, on many threads; the C
/// allocator keeps what was freed in its per-thread pools, where it counts as the daemon's memory for good.
/// `malloc_trim` returns those free pages; it costs a walk of the pools, so it runs once per burst, not per folder.
enum MemoryRelease {
    /// Whether a release is scheduled.
    private static let scheduled = Mutex(false)

    /// glibc's `malloc_trim`, if the C library has one (Swift's Glibc module does not export it).
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Releases freed memory about `delay` from now (once, however often it is asked meanwhile: during a burst,
    /// every `delay`).
    static func soon(after delay: Duration = .milliseconds(250)) {
        guard trim != nil, scheduled.withLock({ wasScheduled in
            defer { wasScheduled = true }
            return !wasScheduled
        }) else { return }
        Task.detached(priority: .background) {
            try? await Task.sleep(for: delay)
            scheduled.withLock { $0 = false }
            _ = trim?(0)
        }
    }
}
