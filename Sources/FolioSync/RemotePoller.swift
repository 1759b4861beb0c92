import FolioCore
import Logging
import Synchronization

/// Brings remote changes into the tree: the containers at start (``start()``), then, whenever the provider
/// pushes a change notification (the local provider does, with inotify) and every `interval` in any case, the
/// changes of each container since its sync anchor (``Provider/changes(in:since:)``): work in proportion to what
/// changed. An expired anchor makes a resync of what the tree lists.
public final class RemotePoller: RemoteRefreshing {
    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    private let interval: Duration?
    private let push: Bool
    private let wake = WakeSignal()
    /// Containers whose anchor expired (or was never kept while folders were listed): listed again next time.
    private let resyncs = Mutex<Set<ContainerID>>([])
    /// Whether ``start()`` brought every container's changes in.
    private let started = Mutex(false)
    /// Whether the provider said what it cannot do (``Provider/limitations()``): asked until it could tell.
    private let limitationsRecorded = Mutex(false)

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

    /// Brings the containers in (their roots, and an anchor for each container that has none) and the changes
    /// since the anchors kept from before (work in proportion to what changed while no daemon ran): what the
    /// mount needs to appear; no folder is listed (they are when first looked at), and a resync waits for the
    /// background. Returns false (and logs) if the provider could not be reached: the tree then shows what the
    /// store remembers.
    @discardableResult
    public func start() async -> Bool {
        do {
            // (Containers anchored before this start: the others have no changes to bring.)
            let anchored = Set(try await provider.listContainers().map(\.id).filter {
                fileSystem.anchor(of: $0) != nil
            })
            for container in try await registerContainers() where anchored.contains(container) {
                if resyncs.withLock({ $0.contains(container) }) { continue }
                if try await !pullChanges(container, resyncing: false) { return false }
            }
            fileSystem.recordProviderReachability(online: true, error: nil)
            started.withLock { $0 = true }
            return true
        } catch {
            recordFailure(error)
            return false
        }
    }

    /// Passes what the provider cannot do on to `folio status`, once it can tell (from the polls, not from
    /// ``start()``: finding it out can take a WebDAV server a few requests, which the mount does not wait for).
    private func recordLimitationsOnce() async {
        guard !limitationsRecorded.withLock({ $0 }), let limitations = await provider.limitations() else { return }
        fileSystem.recordProviderLimitations(limitations)
        limitationsRecorded.withLock { $0 = true }
        for limitation in limitations { logger.notice("the remote is limited: \(limitation)") }
    }

    /// Asks the provider for each container's changes since its anchor and merges them (a container whose
    /// anchor expired is resynced: every listed folder is listed again, keeping every local change). Returns
    /// false (and logs) if the provider could not be reached, or if an answer raced with our own uploads and
    /// was set aside without advancing the anchor (the caller refreshes again soon).
    @discardableResult
    public func refresh() async -> Bool {
        do {
            var complete = true
            for container in try await registerContainers() {
                let resync = resyncs.withLock { $0.contains(container) }
                if try await !(resync ? self.resync(container) : pullChanges(container)) {
                    logger.debug("changes of \(container) raced with our own uploads; retrying shortly")
                    complete = false
                }
            }
            if try await !takeItemsAgain() { complete = false }
            fileSystem.recordProviderReachability(online: true, error: nil)
            await recordLimitationsOnce()
            return complete
        } catch {
            recordFailure(error)
            return false
        }
    }

    /// Lists the containers and registers them with the core (roots; anchors taken for containers without one,
    /// before any of their folders is listed). Returns the container ids, the Drive first.
    private func registerContainers() async throws -> [ContainerID] {
        let containers = try await provider.listContainers().sorted { $0.id == .drive && $1.id != .drive }
        var entries: [(Container, SyncAnchor?)] = []
        for container in containers {
            let anchor = fileSystem.anchor(of: container.id) == nil
                ? try await provider.currentAnchor(in: container.id) : nil
            entries.append((container, anchor))
        }
        let resync = try fileSystem.registerContainers(entries)
        if !resync.isEmpty {
            logger.notice("no sync anchor was kept for \(resync): listing again what is known")
            resyncs.withLock { $0.formUnion(resync) }
        }
        return containers.map(\.id)
    }

    /// Merges the changes of `container` since its anchor, as many change sets as the provider has. Returns
    /// false if one raced with our own uploads (set aside, the anchor not advanced), or if the anchor expired and
    /// `resyncing` is false (the resync is left for the next refresh).
    private func pullChanges(_ container: ContainerID, resyncing: Bool = true) async throws -> Bool {
        while let anchor = fileSystem.anchor(of: container) {
            let epoch = fileSystem.remoteEpoch()
            let changes: RemoteChanges
            do {
                changes = try await provider.changes(in: container, since: anchor)
            } catch {
                guard case .anchorExpired(let reason) = FolioError(error) else { throw error }
                logger.notice("the sync anchor of \(container) expired (\(reason)): listing again what is known")
                resyncs.withLock { _ = $0.insert(container) }
                return resyncing ? try await resync(container) : false
            }
            guard try fileSystem.applyChanges(changes, in: container, epoch: epoch) else { return false }
            if !changes.moreComing { return true }
        }
        return true
    }

    /// Asks the provider for the items the core has to take again (a delete of ours the remote refused: the
    /// item changed there, and comes back) and merges them. Returns false if one raced with our own uploads.
    private func takeItemsAgain() async throws -> Bool {
        var complete = true
        for (id, container) in fileSystem.itemsToTakeAgain() {
            let epoch = fileSystem.remoteEpoch()
            let item: RemoteItem?
            do {
                item = try await provider.item(id, in: container)
            } catch {
                guard case .notFound = FolioError(error) else { throw error }
                item = nil
            }
            if try !fileSystem.applyItemTakenAgain(item, id: id, in: container, epoch: epoch) { complete = false }
        }
        return complete
    }

    /// Takes a new anchor of `container`, then lists again every folder of it the tree lists (local changes
    /// stay: the merge never takes anything from an item that waits for upload), then stores the anchor.
    /// Returns false if a listing raced with our own uploads (the resync is taken again later).
    private func resync(_ container: ContainerID) async throws -> Bool {
        let anchor = try await provider.currentAnchor(in: container)
        for ino in fileSystem.listedFolders(in: container) {
            guard let node = fileSystem.node(ino) else { continue }
            let epoch = fileSystem.remoteEpoch()
            let items: [RemoteItem]
            do {
                items = try await provider.enumerateWholeFolder(
                    node.itemID.isContainerRoot ? nil : node.itemID, in: container)
            } catch {
                // Gone: the listing of its parent (earlier) took it away, or keeps it for its local changes.
                if case .notFound = FolioError(error) { continue }
                if case .notDirectory = FolioError(error) { continue }
                throw error
            }
            guard try fileSystem.applyFolderListing(ino, items: items, epoch: epoch) else { return false }
        }
        try fileSystem.recordAnchor(anchor, for: container)
        resyncs.withLock { _ = $0.remove(container) }
        logger.info("resynced \(container)")
        return true
    }

    /// Logs a provider failure and records reachability.
    private func recordFailure(_ error: any Error) {
        let folioError = FolioError(error)
        if case .offline = folioError {
            logger.warning("provider offline: \(folioError)")
            fileSystem.recordProviderReachability(online: false, error: folioError.description)
        } else {
            logger.error("cannot enumerate the provider: \(folioError)")
            fileSystem.recordProviderReachability(online: true, error: folioError.description)
        }
    }

    /// Refreshes on push notifications and every `interval`, until the task is cancelled. A burst of
    /// notifications (a folder copied onto the remote) is taken in with one refresh after it pauses briefly.
    public func run() async {
        let notifications = push ? provider.changeNotifications() : nil
        let interval = self.interval ?? (notifications == nil ? Self.defaultInterval : Self.defaultIntervalWithPush)
        logger.info("remote changes: \(notifications == nil ? "polled" : "pushed"), polled every \(interval)")
        await withTaskGroup(of: Void.self) { group in
            if let notifications { group.addTask { await self.listen(to: notifications) } }
            await refreshUntilCancelled(every: interval)
            group.cancelAll()
        }
    }

    /// Wakes the refresh loop at each notification. A stream that ends (the provider replaced its watcher: the
    /// remote went away for a moment, or was unmounted and mounted again) is followed by a refresh, for what
    /// changed meanwhile, and by the provider's stream of now, so push never silently turns into polling; a
    /// stream that keeps ending without news is asked for again less and less often.
    private func listen(to first: AsyncStream<Void>) async {
        var notifications: AsyncStream<Void>? = first
        var pause = Self.resubscribePause
        while !Task.isCancelled {
            if let notifications {
                for await _ in notifications {
                    wake.signal()
                    pause = Self.resubscribePause
                }
            }
            if Task.isCancelled { return }
            wake.signal()
            try? await Task.sleep(for: pause)
            if Task.isCancelled { return }
            pause = min(pause * 2, Self.defaultIntervalWithPush)
            notifications = provider.changeNotifications()
            logger.debug("remote changes: the provider's notifications ended; asked for them again")
        }
    }

    /// Refreshes whenever woken (a notification, ``refreshSoon()``) and every `interval`, backing off while
    /// refreshes fail, until the task is cancelled.
    private func refreshUntilCancelled(every interval: Duration) async {
        var retryPause = Self.retryPause
        // What start() left (a resync, or all of it when the provider failed): at once.
        if !resyncs.withLock({ $0.isEmpty }) || !started.withLock({ $0 }) { wake.signal() }
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

    /// How long the listener waits, after the provider's notifications ended, before it asks for them again.
    static let resubscribePause: Duration = .seconds(1)

    /// How long the poller lets a burst of notifications gather before it refreshes.
    static let burstPause: Duration = .milliseconds(50)
}
