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
    private let wake = WakeSignal()
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
        wake.signal()
    }

    private func run() async {
        while !Task.isCancelled {
            await wake.wait(upTo: interval)
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
}
