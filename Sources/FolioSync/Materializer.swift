import FolioCore
import Logging
import Synchronization

/// Downloads placeholder content by ranges (``RangedDownload``): one download per item and version however many
/// opens read it or wait for it; a reader waits only for the bytes it reads, an open for writing (and `folio
/// download`, pins) for the whole file; progress is recorded in the core; a download nobody reads or waits for
/// any more is cancelled.
///
/// Lock order: `downloads`, then a download's own lock or the core's (never the other way round).
public final class Materializer: RangedMaterializing {
    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    /// The current download of each item being downloaded (an older version's download lives on while handles
    /// read it, outside this table).
    private let downloads = Mutex<[UInt64: RangedDownload]>([:])

    /// Creates a materializer.
    public init(fileSystem: FolioFileSystem, provider: any Provider, logger: Logger) {
        self.fileSystem = fileSystem
        self.provider = provider
        self.logger = logger
    }

    /// Waits for all of `ino`'s content, starting a download or joining the running one. Cancelling the calling
    /// task stops waiting; the last one to stop waiting or reading cancels the download.
    public func materialize(_ ino: UInt64) async throws(FolioError) {
        guard let download = try await join(ino, asHandle: false) else { return }
        try await download.waitUntilComplete()
    }

    /// The download of `ino`'s current version, joined or started, counted as one open handle.
    public func openRanged(_ ino: UInt64) async throws(FolioError) -> (any RangedContent)? {
        try await join(ino, asHandle: true)
    }

    /// Joins (or starts) the download of `ino`'s current version as a handle or as a reservation for
    /// ``RangedDownload/waitUntilComplete()``; `nil` when the content is local. A download of the same version
    /// that is cleaning up is waited for first (it removes its file and record).
    private func join(_ ino: UInt64, asHandle: Bool) async throws(FolioError) -> RangedDownload? {
        while true {
            if Task.isCancelled { throw .interrupted("open of inode \(ino) interrupted") }
            guard let target = try fileSystem.rangedTarget(ino) else { return nil }
            typealias Outcome = (download: RangedDownload?, cleanup: Task<Void, Never>?)
            let outcome = try downloads.withLock { downloads throws(FolioError) -> Outcome in
                if let existing = downloads[ino], existing.version == target.version {
                    let (joined, opens) = existing.join(asHandle: asHandle)
                    if joined {
                        logger.info("an open joins the download of inode \(ino): \(opens) opens wait for it")
                        return (existing, nil)
                    }
                    return (nil, existing.cleanup)
                }
                let download = try RangedDownload(
                    target: target, provider: provider, fileSystem: fileSystem, logger: logger
                ) { [weak self] ended in
                    self?.forget(ended)
                }
                _ = download.join(asHandle: asHandle)
                downloads[ino] = download
                logger.info("downloading \(target.itemID) (inode \(ino), \(target.size) bytes)")
                return (download, nil)
            }
            if let download = outcome.download {
                download.completeIfWhole()
                return download
            }
            if let cleanup = outcome.cleanup { await cleanup.value }
        }
    }

    /// Forgets a download that ended (unless a newer one took its place).
    private func forget(_ download: RangedDownload) {
        downloads.withLock { downloads in
            if downloads[download.target.ino] === download { downloads[download.target.ino] = nil }
        }
    }
}
