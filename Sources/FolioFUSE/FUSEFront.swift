import FolioCore

/// What stands in front of a mount's handlers: the mount's one hook. The inotify replay (`FolioReplay`) is
/// the front there is: it sees every request first and answers its own helper's requests itself, and it hears of
/// the remote changes the core reports and of the mount's life. The handlers know nothing of it.
public protocol FUSEFront: Sendable {
    /// Answers `request` through `reply` and returns `true`, or returns `false` to hand it to its handler. Runs
    /// in the request's callback on a libfuse worker thread: it must not wait.
    func answer(_ request: FUSERequest, from caller: FUSECaller, reply: Reply) -> Bool

    /// The mount is up, on the device `device` (`major:minor`; `nil` if unknown). `dropEntry` drops a name in a
    /// folder (core inode) from the kernel's caches at once: from the front's own thread, never from a callback.
    func mounted(device: String?, dropEntry: @escaping @Sendable (_ parent: UInt64, _ name: String) -> Void)

    /// Remote changes the core reports, in order, after the invalidations they caused
    /// (``KernelCacheInvalidator/replay(_:)``).
    func replay(_ changes: [ReplayedChange])

    /// The mount's loop is ending: nothing may wait for a request to the mount any more. From any thread.
    func stop()

    /// The session is about to be freed: as ``stop()``, and let go of what the front holds.
    func detach()
}
