import FolioCore
import Logging
import Synchronization

/// Sends committed changes to the provider in the background: a few workers take the oldest pending work
/// from the core, retry failures with exponential backoff, and stop only when nothing is pending.
public final class Uploader: UploadScheduling {
    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    private let concurrency: Int
    private let wake = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    private let loop = Mutex<Task<Void, Never>?>(nil)
    private let backoff = Mutex<Duration>(.zero)
    /// Shortest wait after a failure.
    public let minimumBackoff: Duration
    /// Longest wait after repeated failures.
    public let maximumBackoff: Duration

    /// Creates an uploader (call ``start()``).
    public init(
        fileSystem: FolioFileSystem, provider: any Provider, logger: Logger, concurrency: Int = 4,
        minimumBackoff: Duration = .milliseconds(100), maximumBackoff: Duration = .seconds(10)
    ) {
        self.fileSystem = fileSystem
        self.provider = provider
        self.logger = logger
        self.concurrency = concurrency
        self.minimumBackoff = minimumBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// Starts the background loop.
    public func start() {
        loop.withLock { loop in
            guard loop == nil else { return }
            loop = Task { await self.run() }
        }
        uploadsPending()
    }

    /// Stops the loop; queued work stays in the store for the next start.
    public func stop() {
        loop.withLock { $0?.cancel() }
        uploadsPending()
    }

    public func uploadsPending() {
        let waiter = wake.withLock { state -> CheckedContinuation<Void, Never>? in
            state.pending = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    private func waitForWork() async {
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
    }

    private func run() async {
        while !Task.isCancelled {
            let work = fileSystem.nextUploadWork(limit: concurrency)
            if work.isEmpty {
                await waitForWork()
                continue
            }
            let failures = await withTaskGroup(of: Bool.self) { group in
                for item in work {
                    group.addTask { await self.perform(item) }
                }
                var failures = 0
                for await succeeded in group where !succeeded { failures += 1 }
                return failures
            }
            if failures > 0 {
                let delay = backoff.withLock { delay -> Duration in
                    delay = delay == .zero ? minimumBackoff : min(delay * 2, maximumBackoff)
                    return delay
                }
                try? await Task.sleep(for: delay)
            } else {
                backoff.withLock { $0 = .zero }
            }
        }
    }

    private func perform(_ work: UploadWork) async -> Bool {
        let result: Result<RemoteItem?, FolioError>
        do {
            switch work {
            case .create(_, let template, let contents, _, _):
                result = .success(try await provider.createItem(template, contents: contents))
            case .modify(_, let itemID, let container, let baseVersion, let changes, let contents, _, _):
                result = .success(try await provider.modifyItem(
                    itemID, in: container, baseVersion: baseVersion, changes: changes, contents: contents))
            case .delete(let tombstone):
                try await provider.deleteItem(tombstone.itemID, in: tombstone.container, baseVersion: tombstone.remoteVersion)
                result = .success(nil)
            }
        } catch let error as FolioError {
            result = .failure(error)
        } catch {
            result = .failure(.io("\(error)"))
        }
        if case .failure(let error) = result {
            logger.warning("upload failed, will retry if it can: \(work.summary): \(error)")
        }
        work.closeContents()
        fileSystem.finishUpload(work, result: result)
        if case .failure = result { return false }
        return true
    }
}
