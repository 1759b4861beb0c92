import FolioCore
import Logging
import Synchronization

/// Keeps pinned items downloaded and the local content within the cache limit, in the background: woken by
/// the core when pins change, content arrives or the remote adds items to a pinned folder, and every
/// ``interval`` in any case (to retry downloads that failed, e.g. while offline).
public final class ContentKeeper: ContentKeeping {
    private let fileSystem: FolioFileSystem
    private let materializer: any ContentMaterializing
    private let logger: Logger
    /// The most bytes of content kept locally; least recently used clean, unpinned, closed files go first.
    public let cacheLimit: Int64
    /// How often the keeper looks even when nobody woke it.
    public let interval: Duration
    private struct WakeState {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let wake = Mutex(WakeState())
    private let loop = Mutex<Task<Void, Never>?>(nil)

    /// Creates a keeper (call ``start()``).
    public init(
        fileSystem: FolioFileSystem, materializer: any ContentMaterializing, logger: Logger, cacheLimit: Int64,
        interval: Duration = .seconds(5)
    ) {
        self.fileSystem = fileSystem
        self.materializer = materializer
        self.logger = logger
        self.cacheLimit = cacheLimit
        self.interval = interval
    }

    /// Starts the background loop.
    public func start() {
        loop.withLock { loop in
            guard loop == nil else { return }
            loop = Task { await self.run() }
        }
        contentChanged()
    }

    /// Stops the loop.
    public func stop() {
        loop.withLock { $0?.cancel() }
        contentChanged()
    }

    public func contentChanged() {
        let waiter = wake.withLock { state -> CheckedContinuation<Void, Never>? in
            state.pending = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    private func run() async {
        while !Task.isCancelled {
            await waitForWork()
            if Task.isCancelled { return }
            await downloadPinnedItems()
            fileSystem.enforceCacheLimit(cacheLimit)
        }
    }

    /// Downloads every pinned placeholder, one at a time (they wait behind nothing an open needs).
    private func downloadPinnedItems() async {
        for ino in fileSystem.pinnedPlaceholders() {
            if Task.isCancelled { return }
            do {
                try await materializer.materialize(ino)
            } catch {
                logger.warning("cannot download pinned inode \(ino) now, will retry: \(error)")
                return
            }
        }
    }

    private func waitForWork() async {
        let interval = self.interval
        let timer = Task {
            try? await Task.sleep(for: interval)
            self.contentChanged()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = wake.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.contentChanged()
        }
        wake.withLock { $0.pending = false }
    }
}
