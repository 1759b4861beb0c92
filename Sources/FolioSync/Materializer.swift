import FolioCore
import Logging
import Synchronization

/// Downloads placeholder content: one download per item however many opens wait for it, progress recorded
/// in the core, and a download nobody waits for any more is cancelled.
public final class Materializer: ContentMaterializing {
    private struct Download {
        var task: Task<Void, Never>
        var waiters: [UInt64: CheckedContinuation<Void, any Error>]
    }

    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    private let downloads = Mutex<[UInt64: Download]>([:])
    private let nextWaiter = Atomic<UInt64>(1)

    /// Creates a materializer.
    public init(fileSystem: FolioFileSystem, provider: any Provider, logger: Logger) {
        self.fileSystem = fileSystem
        self.provider = provider
        self.logger = logger
    }

    /// Waits for `ino`'s content, starting a download or joining the running one. Cancelling the calling task
    /// stops waiting; the last waiter to stop cancels the download.
    public func materialize(_ ino: UInt64) async throws(FolioError) {
        let waiter = nextWaiter.wrappingAdd(1, ordering: .relaxed).oldValue
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    join(ino, waiter: waiter, continuation: continuation)
                }
            } onCancel: {
                leave(ino, waiter: waiter)
            }
        } catch let error as FolioError {
            throw error
        } catch {
            throw .io("\(error)")
        }
    }

    private func join(_ ino: UInt64, waiter: UInt64, continuation: CheckedContinuation<Void, any Error>) {
        let immediate = downloads.withLock { downloads -> Result<Void, FolioError>? in
            if Task.isCancelled { return .failure(.interrupted("open of inode \(ino) interrupted")) }
            if downloads[ino] != nil {
                downloads[ino]!.waiters[waiter] = continuation
                logger.debug("an open joins the download of inode \(ino): \(downloads[ino]!.waiters.count) opens wait for it")
                return nil
            }
            let ticket: MaterializationTicket?
            do throws(FolioError) {
                ticket = try fileSystem.beginMaterialization(ino)
            } catch {
                return .failure(error)
            }
            guard let ticket else { return .success(()) }
            let task = Task { await self.download(ticket) }
            downloads[ino] = Download(task: task, waiters: [waiter: continuation])
            return nil
        }
        if let immediate { continuation.resume(with: immediate.mapError { $0 as any Error }) }
    }

    private func leave(_ ino: UInt64, waiter: UInt64) {
        let continuation: CheckedContinuation<Void, any Error>? = downloads.withLock { downloads in
            guard var download = downloads[ino], let continuation = download.waiters.removeValue(forKey: waiter) else {
                return nil
            }
            if download.waiters.isEmpty {
                logger.info("download of inode \(ino) cancelled: nobody waits for it")
                download.task.cancel()
            }
            downloads[ino] = download
            return continuation
        }
        continuation?.resume(throwing: FolioError.interrupted("open interrupted"))
    }

    private func download(_ ticket: MaterializationTicket) async {
        let fileSystem = self.fileSystem
        let ino = ticket.ino
        let total = ticket.size
        logger.info("downloading \(ticket.itemID) (inode \(ino), \(total) bytes)")
        let result: Result<RemoteItem, FolioError>
        do {
            let item = try await provider.fetchContents(
                of: ticket.itemID, in: ticket.container, version: ticket.version, to: ticket.path
            ) { done in
                fileSystem.recordProgress(ino, done: done, total: total)
            }
            result = .success(item)
        } catch let error as FolioError {
            result = .failure(Task.isCancelled ? .interrupted("download cancelled") : error)
        } catch {
            result = .failure(.io("\(error)"))
        }
        if case .failure(let error) = result {
            logger.error("download of \(ticket.itemID) (inode \(ino)) failed: \(error)")
        }
        fileSystem.finishMaterialization(ticket, result: result)
        let waiters = downloads.withLock { $0.removeValue(forKey: ino)?.waiters.values.map { $0 } ?? [] }
        for waiter in waiters {
            switch result {
            case .success: waiter.resume()
            case .failure(let error): waiter.resume(throwing: error)
            }
        }
    }
}
