import FolioCore
import Logging
import Synchronization

/// Keeps pinned items downloaded, the local content within the cache limit, and the remote side of every
/// conflict as a conflict version, in the background: woken by the core when pins change, content arrives,
/// the remote adds items to a pinned folder or a conflict appears, and every ``interval`` in any case (to
/// retry what failed, e.g. while offline).
public final class ContentKeeper: ContentKeeping {
    private let fileSystem: FolioFileSystem
    private let materializer: any ContentMaterializing
    private let provider: any Provider
    private let logger: Logger
    /// The most bytes of content kept locally; least recently used clean, unpinned, closed files go first.
    public let cacheLimit: Int64
    /// How often the keeper looks even when nobody woke it.
    public let interval: Duration
    private let wake = WakeSignal()
    private let loop = Mutex<Task<Void, Never>?>(nil)

    /// Creates a keeper (call ``start()``).
    public init(
        fileSystem: FolioFileSystem, materializer: any ContentMaterializing, provider: any Provider, logger: Logger,
        cacheLimit: Int64, interval: Duration = .seconds(5)
    ) {
        self.provider = provider
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
            await keepConflictVersions()
            await downloadPinnedItems()
            fileSystem.enforceCacheLimit(cacheLimit)
        }
    }

    /// For each conflicted item, downloads the remote's current content as a conflict version (once per remote
    /// version); an item the remote deleted is created there again from the local version.
    private func keepConflictVersions() async {
        let conflicted = fileSystem.conflictedItems()
        guard !conflicted.isEmpty else { return }
        for item in conflicted {
            if Task.isCancelled { return }
            do {
                let remote: RemoteItem
                do {
                    remote = try await provider.item(item.itemID, in: item.container)
                } catch FolioError.notFound {
                    try fileSystem.recreateDeletedItem(item.ino)
                    continue
                }
                if remote.version == item.remoteVersion {
                    fileSystem.settleConflictFetch(item.itemID)
                    continue
                }
                let file = try fileSystem.newContentFile()
                do {
                    let fetched = try await provider.fetchContents(
                        of: remote.id, in: item.container, version: remote.version, to: file.path) { _ in }
                    try fileSystem.addConflictVersion(item.ino, remote: fetched, fileName: file.name)
                } catch {
                    fileSystem.discardContentFile(file.name)
                    throw error
                }
            } catch {
                logger.warning("cannot keep the remote version of conflicted \(item.itemID) now, will retry: \(error)")
            }
        }
    }

    /// Downloads every pinned placeholder, one at a time (they wait behind nothing an open needs), once the
    /// pinned folders are listed (folder by folder: a listed folder's new subfolders are pinned and listed next).
    private func downloadPinnedItems() async {
        var folders = fileSystem.pinnedFoldersToList()
        while !folders.isEmpty {
            for ino in folders {
                if Task.isCancelled { return }
                do {
                    try await fileSystem.ensureListed(ino)
                } catch {
                    logger.warning("cannot list pinned folder \(ino) now, will retry: \(error)")
                    return
                }
            }
            folders = fileSystem.pinnedFoldersToList()
        }
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
