import FolioCore
import Logging

/// Brings the provider's containers into the tree: once at start, then whenever the provider pushes a change
/// notification (the local provider does, with inotify), and every `interval` in any case (a full enumeration
/// per container).
public final class RemotePoller: Sendable {
    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    private let interval: Duration

    /// Creates a poller.
    public init(fileSystem: FolioFileSystem, provider: any Provider, logger: Logger, interval: Duration) {
        self.fileSystem = fileSystem
        self.provider = provider
        self.logger = logger
        self.interval = interval
    }

    /// Enumerates every container once and merges it into the tree. Returns false (and logs) if the provider
    /// could not be reached; the tree then shows what the store remembers.
    @discardableResult
    public func refresh() async -> Bool {
        do {
            let containers = try await provider.listContainers()
            for container in containers.sorted(by: { $0.id == .drive && $1.id != .drive }) {
                let epoch = fileSystem.remoteEpoch()
                let (items, _) = try await provider.enumerateItems(in: container.id)
                if try !fileSystem.applyEnumeration(of: container, items: items, epoch: epoch) {
                    logger.debug("enumeration of \(container.id) raced with our own uploads; next poll retries")
                }
            }
            fileSystem.recordProviderReachability(online: true, error: nil)
            return true
        } catch {
            let folioError = error as? FolioError ?? .io("\(error)")
            if case .offline = folioError {
                logger.warning("provider offline: \(folioError)")
                fileSystem.recordProviderReachability(online: false, error: folioError.description)
            } else {
                logger.error("cannot enumerate the provider: \(folioError)")
                fileSystem.recordProviderReachability(online: true, error: folioError.description)
            }
            return false
        }
    }

    /// Refreshes on push notifications and every `interval`, until the task is cancelled. A burst of
    /// notifications (a folder copied onto the remote) is taken in with one refresh after it pauses briefly.
    public func run() async {
        let wake = WakeSignal()
        let listener = Task { [provider] in
            guard let notifications = provider.changeNotifications() else { return }
            for await _ in notifications { wake.signal() }
        }
        defer { listener.cancel() }
        while !Task.isCancelled {
            await wake.wait(upTo: interval)
            if Task.isCancelled { return }
            try? await Task.sleep(for: Self.burstPause)
            await refresh()
        }
    }

    /// How long the poller lets a burst of notifications gather before it refreshes.
    static let burstPause: Duration = .milliseconds(50)
}
