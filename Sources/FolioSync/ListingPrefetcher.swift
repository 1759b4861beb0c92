import FolioCore
import Logging
import Synchronization

/// Lists the tree below a view's root in the background after a mount (`folio mount --prefetch-listing`), a few
/// folders at a time, breadth first, so that a later walk of it (`find`, a file manager, an indexer) is answered
/// from memory instead of waiting for each folder's first listing. Nothing is downloaded: only listings.
///
/// A folder that cannot be listed now (offline, a server error) is tried again after ``retryDelay``, for as long
/// as the prefetcher runs; a folder listed already (looked at meanwhile) costs nothing.
public final class ListingPrefetcher: Sendable {
    private let fileSystem: FolioFileSystem
    private let root: UInt64
    private let logger: Logger
    private let concurrency: Int
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// How long a folder that could not be listed waits before it is tried again.
    public static var retryDelay: Duration { .seconds(5) }

    /// A prefetcher of the tree below `root`, listing at most `concurrency` folders at once.
    public init(fileSystem: FolioFileSystem, root: UInt64, logger: Logger, concurrency: Int = 2) {
        self.fileSystem = fileSystem
        self.root = root
        self.logger = logger
        self.concurrency = max(1, concurrency)
    }

    /// Starts listing in the background.
    public func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { await self.run() }
        }
    }

    /// Stops listing (what is listed stays).
    public func stop() {
        task.withLock { $0?.cancel() }
    }

    private func run() async {
        let started = ContinuousClock.now
        var queue: [UInt64] = [root]
        var next = 0
        var listed = 0
        while next < queue.count, !Task.isCancelled {
            let wave = Array(queue[next..<min(queue.count, next + concurrency)])
            next += wave.count
            let failed = await withTaskGroup(of: UInt64?.self) { group -> [UInt64] in
                for folder in wave {
                    group.addTask { [fileSystem, logger] in
                        do {
                            try await fileSystem.ensureListed(folder)
                            return nil
                        } catch {
                            logger.debug("prefetch: folder \(folder) not listed now, tried again later: \(error)")
                            return folder
                        }
                    }
                }
                var failed: [UInt64] = []
                for await folder in group { if let folder { failed.append(folder) } }
                return failed
            }
            for folder in wave where !failed.contains(folder) {
                listed += 1
                queue += fileSystem.childFolders(of: folder)
            }
            if !failed.isEmpty {
                try? await Task.sleep(for: Self.retryDelay)
                queue += failed
            }
        }
        guard !Task.isCancelled else { return }
        logger.info("prefetch: listed \(listed) folders in \(ContinuousClock.now - started)")
    }
}
