import FolioCore
import Logging
import Synchronization

/// Lists folders from the provider when the core first needs their children (a lookup in them, a listing of
/// them, a pin or a download): every page of the folder, merged with
/// ``FolioFileSystem/applyFolderListing(_:items:epoch:)``. One listing per folder at a time (callers wait for the
/// one running). A listing that raced with our own uploads (the upload epoch moved meanwhile) is set aside and
/// taken again once the uploads in flight end.
public final class FolderLister: FolderListing {
    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    /// The listing running per folder.
    private let flights = Mutex<[UInt64: Task<Result<Void, FolioError>, Never>]>([:])

    /// How many times a listing is taken again when it keeps racing with uploads before it gives up (`EBUSY`).
    static let attempts = 20

    /// Creates a lister.
    public init(fileSystem: FolioFileSystem, provider: any Provider, logger: Logger) {
        self.fileSystem = fileSystem
        self.provider = provider
        self.logger = logger
    }

    /// Lists `ino` (or waits for the listing of it that runs).
    public func listFolder(_ ino: UInt64) async throws(FolioError) {
        let flight = flights.withLock { flights in
            if let running = flights[ino] { return running }
            let task = Task { await self.list(ino) }
            flights[ino] = task
            return task
        }
        let result = await flight.value
        flights.withLock { flights in
            if flights[ino] == flight { flights[ino] = nil }
        }
        try result.get()
    }

    /// One listing of `ino`, taken again while it races with uploads.
    private func list(_ ino: UInt64) async -> Result<Void, FolioError> {
        for _ in 0..<Self.attempts {
            guard let target = fileSystem.listingTarget(ino) else { return .success(()) }
            let epoch = fileSystem.remoteEpoch()
            do {
                let items = try await provider.enumerateWholeFolder(target.folder, in: target.container)
                let applied = try fileSystem.applyFolderListing(ino, items: items, epoch: epoch)
                fileSystem.recordProviderReachability(online: true, error: nil)
                if applied {
                    logger.debug("listed folder \(ino) (\(items.count) items)")
                    MemoryRelease.soon()
                    return .success(())
                }
                logger.debug("listing of folder \(ino) raced with our own uploads; listing again")
                await waitForUploadsInFlight()
            } catch {
                let error = FolioError(error)
                if case .anchorExpired = error {
                    logger.debug("the provider could not continue the listing of folder \(ino); listing again")
                    continue
                }
                if case .offline = error {
                    fileSystem.recordProviderReachability(online: false, error: error.description)
                }
                logger.warning("cannot list folder \(ino): \(error)")
                return .failure(error)
            }
        }
        return .failure(.busy("the listing of folder \(ino) kept racing with uploads"))
    }

    /// Waits, a bounded time, until no upload runs (a listing overlapping one is set aside anyway).
    private func waitForUploadsInFlight() async {
        let deadline = ContinuousClock.now + .seconds(1)
        while fileSystem.uploadsInFlightCount > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
