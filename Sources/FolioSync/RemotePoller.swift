import FolioCore
import Logging

/// Brings the provider's containers into the tree: once at start, then whenever the provider pushes a change
/// notification (the local provider does, with inotify), and every `interval` in any case (a full enumeration
/// per container).
public final class RemotePoller: RemoteRefreshing {
    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    private let interval: Duration?
    private let push: Bool
    private let wake = WakeSignal()

    /// How often a provider without push is polled by default: remote changes show within about this time.
    public static let defaultInterval: Duration = .seconds(1)
    /// How often a provider that pushes is polled by default, as a safety net.
    public static let defaultIntervalWithPush: Duration = .seconds(30)

    /// Creates a poller; `interval` `nil` picks the default for the provider (with or without push); `push`
    /// false ignores the provider's notifications.
    public init(
        fileSystem: FolioFileSystem, provider: any Provider, logger: Logger, interval: Duration?, push: Bool = true
    ) {
        self.fileSystem = fileSystem
        self.provider = provider
        self.logger = logger
        self.interval = interval
        self.push = push
    }

    /// Enumerates every container once and merges it into the tree. Returns false (and logs) if the provider
    /// could not be reached, or if an enumeration raced with our own uploads and was set aside (the caller
    /// refreshes again soon); the tree then shows what the store remembers.
    @discardableResult
    public func refresh() async -> Bool {
        do {
            let containers = try await provider.listContainers()
            var complete = true
            for container in containers.sorted(by: { $0.id == .drive && $1.id != .drive }) {
                let epoch = fileSystem.remoteEpoch()
                let (items, _) = try await provider.enumerateSubtree(in: container.id)
                if try !fileSystem.applyEnumeration(of: container, items: items, epoch: epoch) {
                    logger.debug("enumeration of \(container.id) raced with our own uploads; retrying shortly")
                    complete = false
                }
            }
            fileSystem.recordProviderReachability(online: true, error: nil)
            return complete
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
        let wake = self.wake
        let notifications = push ? provider.changeNotifications() : nil
        let interval = self.interval ?? (notifications == nil ? Self.defaultInterval : Self.defaultIntervalWithPush)
        logger.info("remote changes: \(notifications == nil ? "polled" : "pushed"), polled every \(interval)")
        let listener = Task {
            guard let notifications else { return }
            for await _ in notifications { wake.signal() }
        }
        var retryPause = Self.retryPause
        defer { listener.cancel() }
        while !Task.isCancelled {
            await wake.wait(upTo: interval)
            if Task.isCancelled { return }
            try? await Task.sleep(for: Self.burstPause)
            await waitForUploadsInFlight()
            if await refresh() {
                retryPause = Self.retryPause
            } else {
                // Set aside (it raced with our uploads) or the provider failed: again soon rather than at the next
                // poll, backing off while it keeps failing (an offline provider is not asked twice a second).
                try? await Task.sleep(for: retryPause)
                retryPause = min(retryPause * 2, interval)
                wake.signal()
            }
        }
    }

    /// Waits, at most ``uploadWaitLimit``, until no upload runs: our own uploads change the remote (and push
    /// notifications for it), and an enumeration that overlaps one is set aside anyway, so a bulk upload
    /// would otherwise pay for walks of the remote that are thrown away.
    private func waitForUploadsInFlight() async {
        let deadline = ContinuousClock.now + Self.uploadWaitLimit
        while fileSystem.uploadsInFlightCount > 0 && ContinuousClock.now < deadline && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Refreshes soon (the core knows the remote differs from the tree).
    public func refreshSoon() {
        wake.signal()
    }

    /// How long the poller first waits before refreshing again after a refresh that did not complete (doubled
    /// after each further one, up to the poll interval).
    static let retryPause: Duration = .milliseconds(500)

    /// The longest a refresh waits for uploads in flight to end.
    static let uploadWaitLimit: Duration = .seconds(1)

    /// How long the poller lets a burst of notifications gather before it refreshes.
    static let burstPause: Duration = .milliseconds(50)
}
