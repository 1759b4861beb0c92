import FolioCore
import Foundation
import Logging
import Synchronization
import SystemPackage

/// One version of one placeholder downloaded by ranges into a version file of the content cache, filled in place
/// (File Provider's partial contents).
///
/// Opening fetches nothing. A read waits only for its own bytes: the missing ones nobody fetches yet are fetched
/// first, in whole aligned pieces (``readAlignment``), as their own provider calls. A read that continues the last
/// ones fetches ahead of itself too: a quarter of what the run of such reads has read so far (at least
/// ``firstReadahead``, at most ``largestReadahead``; the kernel's own readahead already runs ahead of the reader); a
/// run ``largestReadahead`` long is a sequential reader (`cp`, `cat`, a player), and the rest of the file then
/// arrives in the background from where it reads, in steps growing with the throughput
/// (``backgroundStepDuration``). A whole-file waiter (`folio download`, a pin, an open for writing) starts the
/// background too. Random reads fetch what they read and nothing more.
/// Readers of the same bytes share one fetch. Bytes count as here only once the provider call that fetched them
/// succeeded (it checks the version after copying): a version changed meanwhile never mixes into the file. A
/// provider that checks the version before writing and writes in order (``Provider/reportsFinalBytesInOrder``,
/// WebDAV) has its bytes counted as it reports them, so a reader follows a big background step as it arrives.
/// A failed fetch fails the reads that wait for it and leaves its range missing, fetched again by the next read
/// (a failed background step stops the background until a read succeeds again, and fails whole-file waiters).
///
/// What is here is persisted beside the file (``PartialContentRecord``, written only after those bytes are
/// durable; at most every ``persistInterval``), so a daemon restarted after a crash resumes without ever serving
/// a byte that was not fetched. The download lives while handles read through it, someone waits for the whole
/// file; when it ends incomplete, its fetches are cancelled and what is here is kept as the node's partial content
/// (``FolioFileSystem/keepPartialContent(_:record:)``: the next download of the version starts from it), or removed
/// if the node moved on. Once every byte is here, the file becomes the item's content (`materialized`) and the
/// record goes.
///
/// Locks: `state` guards the bookkeeping and is never held across an `await` nor while calling the core or the
/// provider; `reporting` serializes what is told to the core (state and progress) and `persisting` the record's
/// writes and the installation; neither is ever taken while the core's lock is held.
final class RangedDownload: RangedContent {
    /// Bytes a read's fetch is aligned to: a type sniffer's read of a few KiB fetches this much.
    static let readAlignment: Int64 = 64 << 10
    /// The background's first step.
    static let chunkSize: Int64 = 1 << 20
    /// The readahead of the first read that continues the one before it (then a quarter of what the run read).
    static let firstReadahead: Int64 = 128 << 10
    /// The largest readahead, and the run of reads that makes a reader sequential: the rest of the file then comes
    /// in the background.
    static let largestReadahead: Int64 = 8 << 20
    /// How far from where the run of reads got a read may start and still belong to it (the kernel sends the pages
    /// of its own readahead as several reads at once, which may arrive out of order). A run is sequential only
    /// while its reads cover at least half of the bytes it spans: a reader that skips through a file is not.
    static let sequentialSlack: Int64 = 1 << 20
    /// Bytes one background fetch asks for at most.
    static let largestBackgroundStep: Int64 = 256 << 20
    /// How long one background fetch should take: its size follows the throughput seen (doubling at most), so
    /// the latency of each call is paid seldom on a fast link and a slow one never holds a read long.
    static let backgroundStepDuration = 0.5
    /// The background step when its bytes are followed as they arrive: the whole gap (the rest of the file, in
    /// one request: a step that ends lets readers overtake the background with requests of their own until the next
    /// one begins).
    static let followedStep: Int64 = .max / 2
    /// How many bytes counted as they arrive make the core hear of them again.
    static let progressStep: Int64 = 8 << 20
    /// How far ahead of a followed background fetch's front a read still waits for it (see
    /// ``State/waitedFor(followed:)``).
    static let followedLookahead: Int64 = 32 << 20
    /// How often what is here is recorded at most (each record costs an `fdatasync`).
    static let persistInterval: Duration = .milliseconds(500)
    /// How often the record is written while one long fetch brings bytes that count as they come: its
    /// `fdatasync` of what arrived meanwhile (hundreds of MB) competes with the download for the disk (measured:
    /// every 500 ms cost a 1 GiB download a fifth to a third of its speed). The first is written at once.
    static let followedPersistInterval: Duration = .seconds(5)

    /// The version being downloaded.
    let target: RangedTarget
    /// The version file being filled.
    let fileName: String
    /// Its path.
    let path: FilePath
    /// The sidecar's name.
    let recordName: String
    var version: String { target.version }
    var size: Int64 { target.size }

    private let provider: any Provider
    private let fileSystem: FolioFileSystem
    private let cache: ContentCache
    private let logger: Logger
    /// Called once the download ended and cleaned up (the materializer forgets it).
    private let ended: @Sendable (RangedDownload) -> Void
    /// A descriptor on the file, to make fetched bytes durable before the record names them.
    private let descriptor: Int32
    private let state: Mutex<State>
    private let reporting = Mutex<Void>(())
    private let persisting = Mutex<Persisted>(Persisted())
    /// Where ``persist()`` runs: its `fdatasync` of what arrived (hundreds of MB on a fast link) holds neither the
    /// readers a fetch answers nor the next fetch.
    private let persistQueue = DispatchQueue(label: "folio.ranged-download.persist")
    /// Every byte is here (the fast path of ``contains(_:)``).
    private let isComplete = Atomic<Bool>(false)
    /// The provider's bytes count as they are reported (``Provider/reportsFinalBytesInOrder``): a read waits only
    /// for its own bytes, not for the end of the fetch that brings them.
    private let providerReportsFinalBytes: Bool

    /// What `persisting` guards.
    private struct Persisted {
        var outcome = Outcome.pending
        /// When the record was last written.
        var lastWrite: ContinuousClock.Instant?
    }

    /// What became of the file, decided once, under `persisting`.
    private enum Outcome {
        /// Still being filled.
        case pending
        /// It is the item's content now.
        case installed
        /// Complete, but the item had moved on (another version, content of its own): removed at the end.
        case unwanted
        /// The download ended before it was complete: file and record removed.
        case abandoned
    }

    /// One provider call in flight.
    private struct Fetch {
        var range: Range<Int64>
        var isBackground: Bool
        var task: Task<Void, Never>?
    }

    /// A read waiting for its bytes.
    private struct Waiter {
        var range: Range<Int64>
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// The bookkeeping, behind `state`.
    private struct State {
        var present: ByteRanges
        var fetches: [UInt64: Fetch] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var wholeWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var handles = 0
        var reservations = 0
        var nextID: UInt64 = 1
        var backgroundTask: Task<Void, Never>?
        /// Someone wants the whole file (a whole-file waiter, or a sequential reader): the background runs (and is
        /// started again by a read that succeeds after it failed).
        var backgroundWanted = false
        /// Where the current run of reads that continue each other began, how far it got (`nil`: no read yet), and
        /// how many bytes its reads asked for.
        var runStart: Int64 = 0
        var readFront: Int64?
        var runBytes: Int64 = 0
        /// Where the background goes on.
        var backgroundCursor: Int64 = 0
        /// The size of the background's next step: one chunk first (the first bytes come as soon as they can),
        /// then what the throughput seen fetches in ``backgroundStepDuration`` (doubling at most).
        var backgroundStepSize: Int64 = RangedDownload.chunkSize
        /// A read was interrupted since the last open or read: when the last open closes, nobody wants the rest.
        var wasInterrupted = false
        /// Wakes the background when it waits for fetches of others.
        var backgroundWake: CheckedContinuation<Void, Never>?
        /// The bytes here when the core was last told of bytes counted as they arrived.
        var presentTold: Int64 = 0
        /// Bytes the provider wrote for this download (fetches that failed or were cancelled included).
        var transferred: Int64 = 0
        var transferredByFetch: [UInt64: Int64] = [:]
        /// Nobody is interested any more: cleaning up (or cleaned up).
        var hasEnded = false
        var cleanup: Task<Void, Never>?

        /// Open handles and whole-file waiters (for the log).
        var opens: Int { handles + reservations + wholeWaiters.count }
        /// Who keeps the download alive.
        var interest: Int { opens + waiters.count }

        /// The bytes here or being fetched (a cancelled fetch is as good as failed).
        var busy: ByteRanges { waitedFor(followed: false) }

        /// The bytes a read waits for rather than fetching them itself: those here, those of fetches whose bytes
        /// count only at their end, and, of a background fetch whose bytes count as they come
        /// (`followed`), only the next ``RangedDownload/followedLookahead`` bytes after what it brought so far (a
        /// read further on is not kept waiting for a step of 256 MiB to get there).
        func waitedFor(followed: Bool) -> ByteRanges {
            var busy = present
            for (id, fetch) in fetches where fetch.task?.isCancelled != true {
                if followed && fetch.isBackground {
                    let front = fetch.range.lowerBound + (transferredByFetch[id] ?? 0)
                    busy.insert(fetch.range.lowerBound..<min(fetch.range.upperBound, front + followedLookahead))
                } else {
                    busy.insert(fetch.range)
                }
            }
            return busy
        }

        mutating func allocateID() -> UInt64 {
            defer { nextID += 1 }
            return nextID
        }
    }

    /// Starts the download of `target`: resumes from the record a crashed daemon left, if it still describes
    /// this version, or starts over in a new file of the version's size.
    init(
        target: RangedTarget, provider: any Provider, fileSystem: FolioFileSystem, logger: Logger,
        ended: @escaping @Sendable (RangedDownload) -> Void
    ) throws(FolioError) {
        self.target = target
        self.provider = provider
        providerReportsFinalBytes = provider.reportsFinalBytesInOrder
        self.fileSystem = fileSystem
        self.logger = logger
        self.ended = ended
        let cache = fileSystem.contentCache
        let recordName = PartialContentRecord.name(
            container: target.container, itemID: target.itemID, version: target.version)
        var present = ByteRanges()
        let fileName: String
        if let record = fileSystem.claimPartialContent(target.ino, version: target.version),
           record.itemID == target.itemID,
           record.container == target.container, record.version == target.version, record.size == target.size {
            fileName = record.file
            present = record.present
            logger.info(.init(stringLiteral: "resuming the download of \(target.itemID) (inode \(target.ino)): "
                + "\(present.count) of \(target.size) bytes already here"))
        } else {
            cache.removePartialRecord(named: recordName)
            fileName = try cache.makeSizedFile(target.size)
        }
        self.cache = cache
        self.recordName = recordName
        self.fileName = fileName
        path = cache.path(of: fileName)
        descriptor = try cache.openForWriting(fileName)
        var initial = State(present: present)
        // Followed as they arrive, a step's bytes keep no reader waiting for its end: the background asks for the
        // whole gap at once (one long GET instead of a ramp of short ones that readers overtake).
        if providerReportsFinalBytes { initial.backgroundStepSize = Self.followedStep }
        state = Mutex(initial)
    }

    // MARK: Interest

    /// Counts one more open handle (``handleClosed()`` ends it) or reservation (for ``waitUntilComplete()``);
    /// `false` if the download already ended (make a new one).
    func join(asHandle: Bool) -> (joined: Bool, opens: Int) {
        state.withLock { state in
            if state.hasEnded { return (false, 0) }
            state.wasInterrupted = false
            if asHandle {
                state.handles += 1  // (an open fetches nothing: its reads do)
            } else {
                state.reservations += 1
            }
            return (true, state.opens)
        }
    }

    /// The clean-up of a download that ended, to wait for before a new download of the same version starts.
    var cleanup: Task<Void, Never>? { state.withLock { $0.cleanup } }

    func handleClosed() {
        let end = state.withLock { state -> Bool in
            state.handles -= 1
            return endIfUnwanted(&state)
        }
        if end { logger.debug("the last open of inode \(target.ino) closed") }
    }

    func readerInterrupted() {
        state.withLock { $0.wasInterrupted = true }
        logger.info("a reader of inode \(target.ino) was interrupted")
    }

    /// Starts the clean-up if nobody is interested any more (the caller holds the lock); returns whether it did.
    /// Once nobody reads or waits, the download ends (the background too: browsing a folder of videos downloads
    /// none of them), keeping what is here.
    private func endIfUnwanted(_ state: inout State) -> Bool {
        guard !state.hasEnded, state.interest == 0 else { return false }
        state.hasEnded = true
        var tasks = state.fetches.values.compactMap(\.task)
        if let background = state.backgroundTask { tasks.append(background) }
        let wake = state.backgroundWake
        state.backgroundWake = nil
        let present = state.present.count
        let transferred = state.transferred
        state.cleanup = Task { [self] in
            for task in tasks { task.cancel() }
            wake?.resume()
            for task in tasks { await task.value }
            let kept = persisting.withLock { persisted -> Bool in
                if persisted.outcome == .installed { return true }
                if persisted.outcome == .pending {
                    persisted.outcome = .abandoned
                    if keepPartial() { return true }
                }
                cache.removePartialRecord(named: recordName)
                cache.remove(fileName)
                return false
            }
            // Closed only once no `persist()` can use it (one still queued finds the outcome settled): a number
            // reused by another file would be synced in its place, and the record would name bytes never made
            // durable.
            close(descriptor)
            if !kept {
                logger.info(.init(stringLiteral: "download of \(target.itemID) (inode \(target.ino)) cancelled: "
                    + "nobody waits for it (\(present) of \(target.size) bytes were here, \(transferred) fetched)"))
            } else if !isComplete.load(ordering: .acquiring) {
                logger.info(.init(stringLiteral: "download of \(target.itemID) (inode \(target.ino)) paused: "
                    + "\(present) of \(target.size) bytes kept here (\(transferred) fetched)"))
            } else {
                logger.debug("download of \(target.itemID) (inode \(target.ino)) ended: \(transferred) bytes fetched")
            }
            reporting.withLock { _ in
                fileSystem.recordRangedDownload(target.ino, version: target.version, fetching: false, present: nil)
            }
            ended(self)
        }
        return true
    }

    /// Makes what is here durable and recorded, and hands it to the core as the node's partial content (the
    /// caller holds `persisting`, every fetch ended); `false` when there is nothing to keep or the node moved on.
    private func keepPartial() -> Bool {
        let present = state.withLock { $0.present }
        guard !present.isEmpty, let record = recordDurably(present) else { return false }
        return fileSystem.keepPartialContent(target.ino, record: record)
    }

    // MARK: Reads

    func contains(_ range: Range<Int64>) -> Bool {
        if isComplete.load(ordering: .acquiring) { return true }
        return state.withLock { $0.present.contains(range) }
    }

    func read(_ range: Range<Int64>) -> Bool {
        if isComplete.load(ordering: .acquiring) { return true }
        let (here, fetching) = state.withLock { state -> (Bool, Bool) in
            let here = state.present.contains(range)
            guard !state.hasEnded, !range.isEmpty else { return (here, false) }
            return (here, readAhead(after: range, state: &state))
        }
        if fetching { report() }
        return here
    }

    /// Follows the reads: one that continues a dense run of the last ones fetches ahead a quarter of what the run
    /// has read (the caller holds the lock); once the run has read ``largestReadahead``, the reader is sequential and
    /// the rest comes in the background from where it reads. Returns whether a fetch started.
    private func readAhead(after range: Range<Int64>, state: inout State) -> Bool {
        let continues = state.readFront.map { abs(range.lowerBound - $0) <= Self.sequentialSlack } ?? false
        if continues {
            state.readFront = max(state.readFront ?? 0, range.upperBound)
            state.runBytes += Int64(range.count)
        } else {
            state.runStart = range.lowerBound
            state.readFront = range.upperBound
            state.runBytes = Int64(range.count)
        }
        guard continues, let front = state.readFront, front < size, state.backgroundTask == nil,
              state.runBytes * 2 >= front - state.runStart
        else { return false }
        let run = state.runBytes
        let readahead = min(max(run / 4, Self.firstReadahead), Self.largestReadahead)
        if run >= Self.largestReadahead {
            state.backgroundWanted = true
            state.backgroundCursor = front
            startBackground(state: &state)
            return state.backgroundTask != nil
        }
        let alignment = Self.readAlignment
        let upper = min((front + readahead + alignment - 1) / alignment * alignment, size)
        var busy = state.waitedFor(followed: providerReportsFinalBytes)
        var started = false
        for part in busy.missing(in: front..<upper) {
            busy.insert(part)
            startFetch(part, background: false, state: &state)
            started = true
        }
        return started
    }

    func waitUntilPresent(_ range: Range<Int64>) async throws(FolioError) {
        let id = state.withLock { $0.allocateID() }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    register(id, range: range, continuation: continuation)
                }
            } onCancel: {
                cancelWaiter(id)
            }
        } catch {
            throw FolioError(error)
        }
    }

    private func register(_ id: UInt64, range: Range<Int64>, continuation: CheckedContinuation<Void, any Error>) {
        let immediate = state.withLock { state -> Immediate in
            if Task.isCancelled {
                state.wasInterrupted = true
                return .failed(.interrupted("read of inode \(target.ino) interrupted"))
            }
            if state.present.contains(range) { return .ready }
            state.waiters[id] = Waiter(range: range, continuation: continuation)
            // The missing bytes nobody fetches yet, in whole chunks, are fetched now, before the background.
            var busy = state.waitedFor(followed: providerReportsFinalBytes)
            let alignment = Self.readAlignment
            for piece in busy.missing(in: range) {
                let lower = piece.lowerBound / alignment * alignment
                let upper = min((piece.upperBound + alignment - 1) / alignment * alignment, size)
                for part in busy.missing(in: lower..<upper) {
                    busy.insert(part)
                    startFetch(part, background: false, state: &state)
                }
            }
            return .wait
        }
        switch immediate {
        case .ready: continuation.resume()
        case .failed(let error): continuation.resume(throwing: error)
        case .wait: report()
        }
    }

    /// What a registration does now.
    private enum Immediate {
        /// Waits (it was registered).
        case wait
        /// Goes on: its bytes are here.
        case ready
        /// Fails at once.
        case failed(FolioError)
    }

    private func cancelWaiter(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiters.removeValue(forKey: id) else { return nil }
            state.wasInterrupted = true
            // A fetch that was started for reads, none of which waits any more, is not needed now.
            for fetch in state.fetches.values where !fetch.isBackground {
                if !state.waiters.values.contains(where: { $0.range.overlaps(fetch.range) }) { fetch.task?.cancel() }
            }
            return waiter
        }
        waiter?.continuation.resume(throwing: FolioError.interrupted("read of inode \(target.ino) interrupted"))
    }

    // MARK: The whole file

    /// Waits until every byte is here (and the file is the item's content), using the reservation ``join``
    /// made; starts the background fetch. Fails when the background fails.
    func waitUntilComplete() async throws(FolioError) {
        let id = state.withLock { $0.allocateID() }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let immediate = state.withLock { state -> Immediate in
                        state.reservations -= 1
                        if isComplete.load(ordering: .acquiring) {
                            _ = endIfUnwanted(&state)
                            return .ready
                        }
                        if Task.isCancelled {
                            _ = endIfUnwanted(&state)
                            return .failed(.interrupted("download of inode \(target.ino) interrupted"))
                        }
                        state.wholeWaiters[id] = continuation
                        state.backgroundWanted = true
                        startBackground(state: &state)
                        return .wait
                    }
                    switch immediate {
                    case .ready: continuation.resume()
                    case .failed(let error): continuation.resume(throwing: error)
                    case .wait: report()
                    }
                }
            } onCancel: {
                let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    let continuation = state.wholeWaiters.removeValue(forKey: id)
                    if continuation != nil { _ = endIfUnwanted(&state) }
                    return continuation
                }
                continuation?.resume(throwing: FolioError.interrupted("download of inode \(target.ino) interrupted"))
            }
        } catch {
            throw FolioError(error)
        }
    }

    /// Completes at once a download that has every byte (an empty file, or one resumed whole).
    func completeIfWhole() {
        let whole = state.withLock { $0.present.contains(0..<size) }
        if whole { complete() }
    }

    // MARK: Fetching

    /// Starts a provider call for `range` (the caller holds the lock).
    private func startFetch(_ range: Range<Int64>, background: Bool, state: inout State) {
        let id = state.allocateID()
        state.fetches[id] = Fetch(range: range, isBackground: background, task: nil)
        state.fetches[id]?.task = Task { [self] in
            let result = await fetch(id, range: range)
            finish(id, range: range, result: result)
        }
    }

    /// One provider call; bytes it wrote are counted as transferred.
    private func fetch(_ id: UInt64, range: Range<Int64>) async -> Result<Void, FolioError> {
        logger.debug("fetching bytes \(range.lowerBound)..<\(range.upperBound) of \(target.itemID)")
        do {
            _ = try await provider.fetchContents(
                of: target.itemID, in: target.container, version: target.version, range: range, to: path
            ) { [self] done in
                let (arrived, tell) = state.withLock { state -> ([Waiter], Bool) in
                    let before = state.transferredByFetch[id] ?? 0
                    guard done > before else { return ([], false) }
                    state.transferred += done - before
                    state.transferredByFetch[id] = done
                    guard providerReportsFinalBytes else { return ([], false) }
                    let arrived = bytesArrived(
                        range.lowerBound..<min(range.lowerBound + done, range.upperBound), state: &state)
                    // The core hears of the bytes here every few MiB (`user.folio.progress` moves during one long
                    // fetch), not at every part; the record names them as often (a daemon killed during one long
                    // fetch resumes from there, not from its start).
                    let tell = state.present.count - state.presentTold >= Self.progressStep
                    if tell { state.presentTold = state.present.count }
                    return (arrived, tell)
                }
                if tell {
                    report()
                    persistQueue.async { [self] in persist(every: Self.followedPersistInterval) }
                }
                for waiter in arrived { waiter.continuation.resume() }
            }
            return .success(())
        } catch {
            let error = FolioError(error)
            if case .interrupted = error {
                logger.debug("fetch of bytes \(range.lowerBound)..<\(range.upperBound) of \(target.itemID) cancelled")
            }
            return .failure(error)
        }
    }

    /// Counts `bytes`, reported final by the provider while its call runs, as here, and returns the reads they
    /// answer (the caller holds the lock). The last missing bytes are left to ``finish(_:range:result:)``: the file
    /// becomes the item's content before a reader can see them.
    private func bytesArrived(_ bytes: Range<Int64>, state: inout State) -> [Waiter] {
        guard !state.hasEnded, !bytes.isEmpty, !state.present.contains(bytes) else { return [] }
        var present = state.present
        present.insert(bytes)
        guard !present.contains(0..<size) else { return [] }
        state.present = present
        var answered: [Waiter] = []
        for (waiterID, waiter) in state.waiters where present.contains(waiter.range) {
            answered.append(waiter)
            state.waiters[waiterID] = nil
        }
        return answered
    }

    /// Records the end of fetch `id`: its bytes are here, or it failed (the reads waiting for it fail).
    private func finish(_ id: UInt64, range: Range<Int64>, result: Result<Void, FolioError>) {
        if case .success = result {
            let whole = state.withLock { state in
                var present = state.present
                present.insert(range)
                return !state.hasEnded && present.contains(0..<size)
            }
            // The last bytes: the file becomes the item's content before a reader can see them, so whoever read
            // every byte finds the item `materialized`.
            if whole { complete() }
        }
        let (satisfied, failed, isWhole, hasEnded) = state.withLock {
            state -> ([Waiter], [Waiter], Bool, Bool) in
            state.fetches[id] = nil
            state.transferredByFetch[id] = nil
            var satisfied: [Waiter] = []
            var failed: [Waiter] = []
            if case .success = result { state.present.insert(range) }
            for (waiterID, waiter) in state.waiters {
                if state.present.contains(waiter.range) {
                    satisfied.append(waiter)
                    state.waiters[waiterID] = nil
                } else if case .failure(let error) = result, !error.isInterruption, waiter.range.overlaps(range) {
                    failed.append(waiter)
                    state.waiters[waiterID] = nil
                }
            }
            let wake = state.backgroundWake
            state.backgroundWake = nil
            wake?.resume()
            if case .success = result, state.backgroundTask == nil, !state.hasEnded { startBackground(state: &state) }
            return (satisfied, failed, state.present.contains(0..<size), state.hasEnded)
        }
        // Two fetches that end together as the last two may each have seen the other's bytes missing above: the
        // one that finds the file whole now completes it (once: ``complete()`` installs only what is pending).
        if case .success = result, isWhole, !hasEnded, !isComplete.load(ordering: .acquiring) { complete() }
        switch result {
        case .success:
            if !isWhole && !hasEnded { persistQueue.async { [self] in persist() } }
        case .failure(let error):
            if !hasEnded { note(error, range: range) }
        }
        if !hasEnded { report() }
        // The state is told first: a reader woken here sees the item as it is.
        for waiter in satisfied { waiter.continuation.resume() }
        let readError = Self.readError(result)
        for waiter in failed { waiter.continuation.resume(throwing: readError) }
        if !satisfied.isEmpty || !failed.isEmpty {
            state.withLock { _ = endIfUnwanted(&$0) }
        }
    }

    /// Logs a failed fetch (a cancelled one quietly) and tells the core when the provider is offline.
    private func note(_ error: FolioError, range: Range<Int64>) {
        if case .interrupted = error { return }  // (logged by the fetch)
        logger.error(.init(stringLiteral: "download of \(target.itemID) (inode \(target.ino)) failed: bytes "
            + "\(range.lowerBound)..<\(range.upperBound): \(error)"))
        switch error {
        case .offline: fileSystem.recordProviderOffline(error)
        case .conflict, .notFound:
            fileSystem.recordReadFailure(target.ino, reason: Self.readError(.failure(error)).description)
        default: break
        }
    }

    /// What a read waiting for a failed fetch fails with: `EIO` for a version the provider no longer has (one
    /// open never mixes versions), the fetch's own error otherwise.
    private static func readError(_ result: Result<Void, FolioError>) -> FolioError {
        guard case .failure(let error) = result else { return .io("read failed") }
        switch error {
        case .conflict(let reason), .notFound(let reason):
            return .io("the version being read is gone from the remote: \(reason)")
        default:
            return error
        }
    }

    // MARK: Background

    /// Starts the sequential background fetch if someone wants it, it is not running and bytes are missing (the
    /// caller holds the lock).
    private func startBackground(state: inout State) {
        guard state.backgroundWanted, state.backgroundTask == nil, !state.hasEnded, !state.present.contains(0..<size)
        else { return }
        state.backgroundTask = Task { [self] in await runBackground() }
    }

    /// Fetches what is missing, step by step, from where it left off (wrapping around), until every byte is here
    /// or a step fails.
    private func runBackground() async {
        while true {
            enum Next { case fetch(UInt64, Range<Int64>), wait, stop }
            let next = state.withLock { state -> Next in
                if state.hasEnded || Task.isCancelled || state.present.contains(0..<size) {
                    state.backgroundTask = nil
                    return .stop
                }
                let busy = state.busy
                guard let gap = busy.missing(in: state.backgroundCursor..<size).first
                    ?? busy.missing(in: 0..<size).first
                else { return .wait }
                var upper = min(gap.upperBound, gap.lowerBound + state.backgroundStepSize)
                if upper < gap.upperBound { upper = max(gap.lowerBound + 1, upper / Self.chunkSize * Self.chunkSize) }
                let range = gap.lowerBound..<upper
                let id = state.allocateID()
                state.fetches[id] = Fetch(range: range, isBackground: true, task: nil)
                state.backgroundCursor = upper
                return .fetch(id, range)
            }
            switch next {
            case .stop:
                report()
                state.withLock { _ = endIfUnwanted(&$0) }
                return
            case .wait:
                // Everything missing is being fetched by reads: wait for one of them to end.
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        if state.hasEnded || state.fetches.isEmpty { return true }
                        state.backgroundWake = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            case .fetch(let id, let range):
                report()
                let started = ContinuousClock.now
                let result = await fetch(id, range: range)
                if case .success = result, !providerReportsFinalBytes {
                    adaptStep(after: range, took: ContinuousClock.now - started)
                }
                if case .failure(let error) = result {
                    // The background stops (a read that succeeds starts it again); whole-file waiters fail.
                    let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                        state.backgroundTask = nil
                        state.backgroundStepSize = providerReportsFinalBytes ? Self.followedStep : Self.chunkSize
                        let waiters = Array(state.wholeWaiters.values)
                        state.wholeWaiters = [:]
                        return waiters
                    }
                    finish(id, range: range, result: result)
                    let wholeError = Self.readError(result)
                    for waiter in waiters { waiter.resume(throwing: wholeError) }
                    state.withLock { _ = endIfUnwanted(&$0) }
                    if case .interrupted = error {} else {
                        logger.info("background download of \(target.itemID) (inode \(target.ino)) stopped: \(error)")
                    }
                    return
                }
                finish(id, range: range, result: result)
            }
        }
    }

    /// Sizes the next background step from the throughput of the last one.
    private func adaptStep(after range: Range<Int64>, took elapsed: Duration) {
        let seconds = max(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18, 1e-3)
        let byRate = Int64(Double(range.count) / seconds * Self.backgroundStepDuration)
        state.withLock { state in
            let next = min(byRate, state.backgroundStepSize * 2, Self.largestBackgroundStep)
            state.backgroundStepSize = max(Self.chunkSize, next / Self.chunkSize * Self.chunkSize)
        }
    }

    // MARK: Persisting and completing

    /// Makes the bytes here durable, then names them in the record (bytes fetched meanwhile wait for the next).
    private func persist(every interval: Duration = RangedDownload.persistInterval) {
        persisting.withLock { persisted in
            guard persisted.outcome == .pending else { return }
            let now = ContinuousClock.now
            if let last = persisted.lastWrite, now - last < interval { return }
            persisted.lastWrite = now
            _ = recordDurably(state.withLock { $0.present })
        }
    }

    /// Makes the file's bytes durable, then writes the record naming `present` (the caller holds `persisting`);
    /// the record, or `nil` (logged) when either step failed.
    private func recordDurably(_ present: ByteRanges) -> PartialContentRecord? {
        guard fdatasync(descriptor) == 0 else {
            logger.warning("cannot make the download of \(target.itemID) durable: \(Errno(rawValue: errno))")
            return nil
        }
        let record = PartialContentRecord(
            container: target.container, itemID: target.itemID, version: target.version, size: size,
            file: fileName, present: present)
        do {
            try cache.writePartialRecord(record)
        } catch {
            logger.warning("cannot record the ranges of \(target.itemID) here: \(error)")
            return nil
        }
        return record
    }

    /// Every byte is here: the file becomes the item's content (if the item still is a placeholder of this
    /// version), the record goes, and whole-file waiters are answered.
    private func complete() {
        let installed = persisting.withLock { persisted -> Bool in
            guard persisted.outcome == .pending else { return false }
            let installed = fileSystem.installRangedContent(target.ino, version: target.version, fileName: fileName)
            persisted.outcome = installed ? .installed : .unwanted
            cache.removePartialRecord(named: recordName)
            return installed
        }
        isComplete.store(true, ordering: .releasing)
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let waiters = Array(state.wholeWaiters.values)
            state.wholeWaiters = [:]
            return waiters
        }
        if installed { logger.info("downloaded \(target.itemID) (inode \(target.ino), \(size) bytes)") }
        for waiter in waiters { waiter.resume() }
        state.withLock { _ = endIfUnwanted(&$0) }
    }

    // MARK: Telling the core

    /// Tells the core whether the download fetches now (`materializing`) and how many bytes are here.
    private func report() {
        reporting.withLock { _ in
            let (fetching, present, hasEnded) = state.withLock { state in
                (!state.fetches.isEmpty || state.backgroundTask != nil, state.present.count, state.hasEnded)
            }
            guard !hasEnded, !isComplete.load(ordering: .acquiring) else { return }
            fileSystem.recordRangedDownload(target.ino, version: target.version, fetching: fetching, present: present)
        }
    }
}

extension FolioError {
    /// A cancelled call (nobody needed it any more): the reads that overlap it wait for fetches of their own.
    fileprivate var isInterruption: Bool {
        if case .interrupted = self { return true }
        return false
    }
}
