import FolioCore
import Logging
import Synchronization

/// Sends committed changes to the provider in the background: a few workers take the oldest pending work
/// from the core, retry failures with exponential backoff, and stop only when nothing is pending.
///
/// Uploads start once local changes pause for ``quietPeriod`` (or at the latest ``maximumDelay`` after the first
/// change nobody has picked up yet): a burst of changes (`tar x`, a build, an editor's save sequence) is not
/// slowed by uploads competing with it, and an item changed several times in a row is sent once.
///
/// A failure that can clear (offline, no space, …) is retried forever, at most ``maximumBackoff`` apart
/// (``UploadBackoff``); the core makes `failed` only what needs the user (``UploadFailure``). Time is read from
/// `clock` (tests inject a manual one).
public final class Uploader<C: Clock>: UploadScheduling where C.Duration == Duration {
    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    private let concurrency: Int
    /// The most small creates sent in one provider call (``Provider/createItems(_:)``).
    private let createsPerCall: Int
    /// Where time comes from.
    private let clock: C
    private struct WakeState {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        /// When the core last reported a change.
        var lastChange: C.Instant?
        /// When the oldest change not yet looked at was reported.
        var firstUnseenChange: C.Instant?
        /// The user asked to retry now (``retryNow()``).
        var retryRequested = false
        /// Calls that failed in a way that is retried, counted before their outcome reaches the core (which may
        /// report the work again at once): the loop applies their backoff before it starts another call.
        var retriedFailures = 0
    }

    private let wake = Mutex(WakeState())
    /// Held while work is taken from the core and while a call's outcome is recorded there: a failure is counted
    /// (``WakeState/retriedFailures``) and given back to the core under it, so the loop never takes the failed
    /// item again before it has seen the failure and waited its backoff.
    private let handOff = Mutex(())
    private let loop = Mutex<Task<Void, Never>?>(nil)
    /// Shortest wait after a failure.
    public let minimumBackoff: Duration
    /// Longest wait after repeated failures.
    public let maximumBackoff: Duration
    /// How long local changes must pause before uploads start.
    public let quietPeriod: Duration
    /// The longest an upload waits for local changes to pause.
    public let maximumDelay: Duration

    /// Files at least this big are created one per call (their transfer dominates; one failing does not make
    /// others wait for their retry).
    public static var smallCreateLimit: Int64 { 1 << 20 }

    /// Creates an uploader (call ``start()``) that reads time from `clock`: at most `concurrency` provider calls
    /// at a time, small creates `createsPerCall` to a call.
    public init(
        fileSystem: FolioFileSystem, provider: any Provider, logger: Logger, clock: C, concurrency: Int = 16,
        createsPerCall: Int = 32,
        minimumBackoff: Duration = .milliseconds(100), maximumBackoff: Duration = .seconds(10),
        quietPeriod: Duration = .milliseconds(300), maximumDelay: Duration = .seconds(3)
    ) {
        self.clock = clock
        self.quietPeriod = quietPeriod
        self.maximumDelay = maximumDelay
        self.fileSystem = fileSystem
        self.provider = provider
        self.logger = logger
        self.concurrency = concurrency
        self.createsPerCall = max(1, createsPerCall)
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
        let now = clock.now
        let waiter = wake.withLock { state -> CheckedContinuation<Void, Never>? in
            state.pending = true
            state.lastChange = now
            if state.firstUnseenChange == nil { state.firstUnseenChange = now }
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

    /// Retries pending work at once: the backoff of earlier failures starts over (`folio retry`).
    public func retryNow() {
        wake.withLock { $0.retryRequested = true }
        uploadsPending()
    }

    /// How a call ended, told to the loop before the core hears of it (see ``WakeState/retriedFailures``).
    private func noting(_ outcome: Outcome) -> Outcome {
        if outcome == .willRetry { wake.withLock { $0.retriedFailures += 1 } }
        return outcome
    }

    /// Whether a retried failure was counted since the last look.
    private func hasRetriedFailures() -> Bool {
        wake.withLock { $0.retriedFailures > 0 }
    }

    /// The retried failures since the last look.
    private func takeRetriedFailures() -> Int {
        wake.withLock { state in
            defer { state.retriedFailures = 0 }
            return state.retriedFailures
        }
    }

    /// Whether ``retryNow()`` was called since the last look.
    private func takeRetryRequest() -> Bool {
        wake.withLock { state in
            defer { state.retryRequested = false }
            return state.retryRequested
        }
    }

    /// Waits until local changes pause for ``quietPeriod``, or ``maximumDelay`` after the first unseen change.
    private func waitForQuiet() async {
        while !Task.isCancelled {
            let now = clock.now
            let deadline = wake.withLock { state -> C.Instant? in
                guard let last = state.lastChange, let first = state.firstUnseenChange else { return nil }
                let deadline = min(last.advanced(by: quietPeriod), first.advanced(by: maximumDelay))
                if deadline <= now {
                    state.firstUnseenChange = nil
                    return nil
                }
                return deadline
            }
            guard let deadline else { return }
            try? await clock.sleep(until: deadline, tolerance: nil)
        }
    }

    /// What the upload loop wakes up for.
    private enum Event: Sendable {
        /// An upload ended.
        case finished(Outcome)
        /// New work was reported.
        case workReported
        /// A retry's wait is over.
        case retryDue
    }

    /// How a provider call ended.
    private enum Outcome: Sendable {
        /// All of it reached the provider.
        case succeeded
        /// Some of it failed in a way that is retried (it clears by itself, or a conflict): after a backoff.
        case willRetry
        /// Some of it failed in a way only the user can clear: the core holds it back, nothing to wait for.
        case needsUser
    }

    /// Keeps up to ``concurrency`` provider calls running: as soon as one ends, or new work is reported, the
    /// next starts (a slow upload does not hold back the others). After a failure that is retried no new call
    /// starts until the backoff has passed (calls in flight go on); the backoff grows with every such failure
    /// (``UploadBackoff``) and starts over once a call succeeds, the queue is empty or the user asks for a retry.
    /// A failure that needs the user asks for no backoff: the core holds that item back until the user acts.
    private func run() async {
        await withTaskGroup(of: Event.self) { group in
            var running = 0
            var backoff = UploadBackoff(minimum: minimumBackoff, maximum: maximumBackoff)
            var listening = false
            var retryAt: C.Instant?
            var sleeping = false
            let clock = self.clock
            while !Task.isCancelled {
                for _ in 0..<takeRetriedFailures() { retryAt = clock.now.advanced(by: backoff.failed()) }
                if let due = retryAt, due > clock.now {
                    if !sleeping {
                        sleeping = true
                        group.addTask {
                            try? await clock.sleep(until: due, tolerance: nil)
                            return .retryDue
                        }
                    }
                } else {
                    retryAt = nil
                    await waitForQuiet()
                    let taken = handOff.withLock { _ -> [[UploadWork]]? in
                        // A failure that came back since the top of the loop: its backoff first.
                        if hasRetriedFailures() { return nil }
                        return running < concurrency
                            ? fileSystem.nextUploadCalls(
                                limit: concurrency - running, createsPerCall: createsPerCall,
                                smallerThan: Self.smallCreateLimit)
                            : []
                    }
                    guard let calls = taken else { continue }
                    for call in calls {
                        group.addTask { .finished(await self.perform(call)) }
                    }
                    running += calls.count
                    if fileSystem.takeDeferredUploads() {
                        // Work whose content could not be opened now: tried again after a backoff (whose wait
                        // starts at the top of the loop).
                        retryAt = clock.now.advanced(by: backoff.failed())
                        continue
                    } else if calls.isEmpty && running == 0 {
                        backoff.reset()
                    }
                }
                if !listening {
                    listening = true
                    group.addTask {
                        await self.waitForWork()
                        return .workReported
                    }
                }
                switch await group.next() {
                case .workReported:
                    listening = false
                    if takeRetryRequest() {
                        backoff.reset()
                        retryAt = nil
                    }
                case .retryDue: sleeping = false
                case .finished(let outcome):
                    running -= 1
                    switch outcome {
                    case .succeeded: backoff.reset()
                    case .willRetry, .needsUser: break  // a retried failure's backoff is applied at the top
                    }
                case nil: break
                }
            }
            group.cancelAll()
        }
    }

    /// Makes one provider call: several creates in one, or one piece of work. Says how it ended.
    private func perform(_ call: [UploadWork]) async -> Outcome {
        if call.count <= 1 {
            guard let work = call.first else { return .succeeded }
            return await perform(work)
        }
        let creations = call.compactMap { work -> ItemCreation? in
            guard case .create(_, let template, let contents, _, _) = work else { return nil }
            return ItemCreation(template, contents: contents)
        }
        precondition(creations.count == call.count, "only creates share a provider call")
        let results = await provider.createItems(creations)
        var outcomes: [(work: UploadWork, result: Result<RemoteItem?, FolioError>)] = []
        for (index, work) in call.enumerated() {
            let result: Result<RemoteItem?, FolioError> = index < results.count
                ? results[index].map { $0 }
                : .failure(.providerFailure("no answer for this create", retryable: true))
            if case .failure(let error) = result {
                logger.warning("upload failed, will retry if it can: \(work.summary): \(error)")
            }
            work.closeContents()
            outcomes.append((work, result))
        }
        return handOff.withLock { _ in
            // The loop hears of the call before the core may report its work again (see `retriedFailures`); how
            // each failure is taken is the core's to say, so it is counted in the same hold of `handOff`.
            noting(Self.outcome(fileSystem.finishUploads(outcomes)))
        }
    }

    /// How a call ended, from how the core took its failures (``FolioFileSystem/finishUploads(_:)``): retried (after
    /// a backoff) if any failure is, else needing the user if any failure does.
    private static func outcome(_ failures: [UploadFailure?]) -> Outcome {
        let failures = failures.compactMap { $0 }
        if failures.isEmpty { return .succeeded }
        return failures.allSatisfy(\.needsUser) ? .needsUser : .willRetry
    }

    private func perform(_ work: UploadWork) async -> Outcome {
        let result: Result<RemoteItem?, FolioError>
        do {
            switch work {
            case .create(_, let template, let contents, _, _):
                result = .success(try await provider.createItem(template, contents: contents))
            case .modify(_, let itemID, let container, let baseVersion, let changes, let contents, _, _):
                result = .success(try await provider.modifyItem(
                    itemID, in: container, baseVersion: baseVersion, changes: changes, contents: contents))
            case .delete(let tombstone, let retryTag):
                try await provider.deleteItem(
                    tombstone.itemID, in: tombstone.container, baseVersion: tombstone.remoteVersion,
                    retryTag: retryTag)
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
        return handOff.withLock { _ in
            noting(Self.outcome([fileSystem.finishUpload(work, result: result)]))
        }
    }
}

extension Uploader where C == ContinuousClock {
    /// Creates an uploader (call ``start()``) on the continuous clock: at most `concurrency` provider calls at a
    /// time, small creates `createsPerCall` to a call.
    public convenience init(
        fileSystem: FolioFileSystem, provider: any Provider, logger: Logger, concurrency: Int = 16,
        createsPerCall: Int = 32,
        minimumBackoff: Duration = .milliseconds(100), maximumBackoff: Duration = .seconds(10),
        quietPeriod: Duration = .milliseconds(300), maximumDelay: Duration = .seconds(3)
    ) {
        self.init(
            fileSystem: fileSystem, provider: provider, logger: logger, clock: ContinuousClock(),
            concurrency: concurrency, createsPerCall: createsPerCall, minimumBackoff: minimumBackoff,
            maximumBackoff: maximumBackoff, quietPeriod: quietPeriod, maximumDelay: maximumDelay)
    }
}
