import Foundation
import Logging
import Synchronization

/// Receives the cache invalidations the core asks for. Implementations queue them and send them from their
/// own thread, never from the handler of the request that caused them.
public protocol KernelCacheInvalidator: Sendable {
    /// Drops cached attributes and data of `ino`.
    func invalidateInode(_ ino: UInt64)
    /// Drops the cached lookup of `name` in `parent`.
    func invalidateEntry(parent: UInt64, name: String)
    /// Replays remote changes, in order, through the mount so its inotify watchers see them (after the
    /// invalidations the changes caused). One merge's changes come in one call: a burst is seen whole.
    func replay(_ changes: [ReplayedChange])
}

extension KernelCacheInvalidator {
    /// Invalidators without a mount to replay through ignore replays.
    public func replay(_ changes: [ReplayedChange]) {}
}

/// Downloads content of placeholders. Concurrent calls for one item share one download.
public protocol ContentMaterializing: Sendable {
    /// Returns once the item's content is in the cache; throws if the download failed or was cancelled.
    func materialize(_ ino: UInt64) async throws(FolioError)
}

/// Wakes the uploader when new work is queued.
public protocol UploadScheduling: Sendable {
    /// Called after a change that has to reach the provider.
    func uploadsPending()
    /// Called when the user asks to retry (`folio retry`): pending work is tried at once, without waiting for
    /// the backoff of earlier failures.
    func retryNow()
}

extension UploadScheduling {
    /// By default, the same as ``uploadsPending()``.
    public func retryNow() { uploadsPending() }
}

/// Tunables of the filesystem core.
public struct FileSystemConfiguration: Sendable {
    /// The desktop indexers Folio knows (Tracker 3 and its later name LocalSearch, KDE's Baloo), as their
    /// executables are named; ``indexers`` by default in the daemon.
    public static let knownIndexers: Set<String> = [
        "tracker-extract-3", "tracker-miner-fs-3", "localsearch-3", "localsearch-extractor-3", "baloo_file",
        "baloo_file_extractor",
    ]

    /// How long a second writer waits for the first one's session to end before `EBUSY`.
    public var writeWaitTimeout: Duration
    /// The user id of items the provider sends (they carry no owner).
    public var defaultUID: UInt32
    /// The group id of items the provider sends.
    public var defaultGID: UInt32
    /// Names the provider can store.
    public var namePolicy: NamePolicy
    /// How long a namespace or attribute change may wait to be written to the store with others (a commit,
    /// `fsync` or unmount writes it sooner).
    public var groupWriteDelay: Duration
    /// How long after a document left its name (renamed away or removed) a new file that the same process puts
    /// there takes the document over (an editor's save); the departed document's upload waits as long.
    public var saveWindow: Duration
    /// The clock that times ``saveWindow``: nanoseconds of a monotonic clock (`CLOCK_MONOTONIC` unless a test
    /// gives one it moves by hand).
    public var saveClock: @Sendable () -> UInt64

    /// Names of processes that never download (desktop indexers, ``indexers``): their open of a file whose content
    /// is not here fails with `EAGAIN`, so they index names, types and what is here, at no download.
    public var indexers: Set<String>
    /// Called by every write into a write session just before its bytes go to the disk, outside the state lock
    /// (tests hold a write there to see that nothing else waits for it).
    public var beforeContentWrite: (@Sendable () -> Void)?
    /// Called just before each transaction of the metadata store (`true`: a durable one), outside the state lock
    /// unless the change is written through (tests hold a commit's transaction there).
    public var beforeStoreWrite: (@Sendable (_ durable: Bool) -> Void)?
    /// Whether the state is opened on its working set (``MetadataStore/loadWorkingSet()``) and reads the rest of
    /// the store folder by folder when needed (``StoredNodes``), so a mount of a big state answers at once;
    /// `false` reads every node before the filesystem is made.
    public var loadsOnDemand: Bool

    /// Creates a configuration; `saveClock` `nil` is the system's monotonic clock.
    public init(
        writeWaitTimeout: Duration = .seconds(10), defaultUID: UInt32 = 0, defaultGID: UInt32 = 0,
        namePolicy: NamePolicy = NamePolicy(), groupWriteDelay: Duration = .milliseconds(20),
        saveWindow: Duration = .seconds(3), saveClock: (@Sendable () -> UInt64)? = nil,
        beforeContentWrite: (@Sendable () -> Void)? = nil,
        beforeStoreWrite: (@Sendable (_ durable: Bool) -> Void)? = nil, indexers: Set<String> = [],
        loadsOnDemand: Bool = false
    ) {
        self.loadsOnDemand = loadsOnDemand
        self.indexers = indexers
        self.beforeContentWrite = beforeContentWrite
        self.beforeStoreWrite = beforeStoreWrite
        self.saveWindow = saveWindow
        self.saveClock = saveClock ?? { FolioFileSystem.monotonicNow }
        self.groupWriteDelay = groupWriteDelay
        self.writeWaitTimeout = writeWaitTimeout
        self.namePolicy = namePolicy
        self.defaultUID = defaultUID
        self.defaultGID = defaultGID
    }
}

/// The filesystem core: namespace, coordination, commits and the bookkeeping of materialization and upload.
///
/// Every operation is protocol neutral (no FUSE types). Cheap operations are synchronous so the adapter can
/// answer on the worker thread at once; operations that may wait (a download, another writer) are `async`.
/// All state lives behind one lock that is never held across an `await` or a provider call, nor (but to write
/// through, see ``StoreWriter``) across a store transaction. Lock order: ``SessionGate``, then `state`, then the
/// ``StoreWriter``'s locks; `hooks` is taken alone; `describerHook` and `usageHook` inside `state` (and nothing inside them).
public final class FolioFileSystem: Sendable {
    /// The inode of the full view's root (the Drive container's root).
    public static let rootIno: UInt64 = 1
    /// The store key of ``writerID``.
    static let writerKey = "writer"

    let state: Mutex<State>
    let store: any MetadataStore
    /// Every write to `store` goes through it, in order.
    let storeWriter: StoreWriter
    let cache: ContentCache
    let configuration: FileSystemConfiguration
    let logger: Logger
    /// This state's name as a writer on the remote, made once and kept in the store: the first part of the
    /// retry tags its uploads carry (``RemoteItemChanges/retryTag``).
    let writerID: String
    let hooks = Mutex<Hooks>(Hooks())
    /// The service that takes the nodes stored or removed (``connect(describer:)``): its own lock, taken inside
    /// `state`'s (nothing is taken inside it).
    let describerHook = Mutex<(any ContentDescribing)?>(nil)
    /// Told of every document opened or committed (`recently-used.xbel`); taken like `describerHook`.
    let usageHook = Mutex<(any UsageObserving)?>(nil)
    let processIdentity = ProcessIdentity()

    struct Hooks: Sendable {
        var materializer: (any ContentMaterializing)?
        var keeper: (any ContentKeeping)?
        var refresher: (any RemoteRefreshing)?
        var lister: (any FolderListing)?
        var uploader: (any UploadScheduling)?
        /// The invalidators of every mount of this state, by the id ``addInvalidator(_:)`` gave out.
        var invalidators: [Int: any KernelCacheInvalidator] = [:]
        var nextInvalidatorID = 1
    }

    /// Opens the filesystem over a store and a content cache, loading every node into memory (the working set
    /// only, with ``FileSystemConfiguration/loadsOnDemand``: see ``StoredNodes``).
    public init(
        store: any MetadataStore, cache: ContentCache, configuration: FileSystemConfiguration = .init(),
        logger: Logger
    ) throws(FolioError) {
        self.store = store
        self.storeWriter = StoreWriter(store: store, cache: cache, beforeWrite: configuration.beforeStoreWrite)
        self.cache = cache
        self.configuration = configuration
        self.logger = logger
        let snapshot = configuration.loadsOnDemand ? try store.loadWorkingSet() : try store.load()
        var state = State()
        state.saves = SaveTracker(window: configuration.saveWindow)
        for node in snapshot.nodes { state.adoptStored(node) }
        if snapshot.isWorkingSet {
            state.nextIno = max(state.nextIno, snapshot.largestIno + 1)
            state.stored = StoredNodes(workingSet: snapshot.nodes, firstNewIno: state.nextIno)
        }
        for tombstone in snapshot.tombstones {
            state.tombstones[tombstone.itemID] = tombstone
            state.nextSequence = max(state.nextSequence, tombstone.sequence + 1)
        }
        state.values = snapshot.values
        state.anchors = snapshot.anchors
        if let writerID = snapshot.values[Self.writerKey] {
            self.writerID = writerID
        } else {
            var batch = StoreBatch()
            batch.values[Self.writerKey] = UUID().uuidString
            try storeWriter.writeThrough(batch, durable: true, removals: [])
            state.values.merge(batch.values) { $1 }
            self.writerID = batch.values[Self.writerKey]!
        }
        if let recents = snapshot.values[VirtualFolderState.storeKey] { state.virtual.decodeLastUse(recents) }
        for conflict in snapshot.conflicts { state.conflicts[conflict.itemID, default: []].append(conflict) }
        // The documents references open are known at once (their names show in the folders that hold them).
        try Self.loadStoredItems(snapshot.references.map(\.target), state: &state, store: store)
        for reference in snapshot.references
        where state.nodes[reference.parent] != nil && state.byItemID[reference.target] != nil {
            state.insertReference(reference)
        }
        self.state = Mutex(state)
        try ensureRoot()
        collectGarbage()
    }

    /// Connects the services the core calls back into; `invalidator` is the first mount's (see
    /// ``addInvalidator(_:)`` for more).
    public func connect(
        materializer: (any ContentMaterializing)?, uploader: (any UploadScheduling)?,
        invalidator: (any KernelCacheInvalidator)?
    ) {
        hooks.withLock {
            $0.materializer = materializer
            $0.uploader = uploader
        }
        if let invalidator { addInvalidator(invalidator) }
    }

    /// Adds the invalidator of one more mount of this state (another view); returns an id for
    /// ``removeInvalidator(_:)``.
    @discardableResult
    public func addInvalidator(_ invalidator: any KernelCacheInvalidator) -> Int {
        hooks.withLock { hooks in
            defer { hooks.nextInvalidatorID += 1 }
            hooks.invalidators[hooks.nextInvalidatorID] = invalidator
            return hooks.nextInvalidatorID
        }
    }

    /// Stops sending invalidations to a mount that went away.
    public func removeInvalidator(_ id: Int) {
        _ = hooks.withLock { $0.invalidators.removeValue(forKey: id) }
    }

    private func ensureRoot() throws(FolioError) {
        try state.withLock { state throws(FolioError) in
            guard state.nodes[Self.rootIno] == nil else { return }
            let now = Timestamp.now()
            let root = Node(
                ino: Self.rootIno, itemID: .root(of: .drive), container: .drive, parent: 0, name: "",
                kind: .directory, modificationTime: now, mode: 0o755, uid: configuration.defaultUID,
                gid: configuration.defaultGID, state: .materialized, remoteVersion: "root", childrenListed: false)
            var batch = StoreBatch()
            batch.upserts.append(root)
            try persist(batch, durable: true, state: &state)
            state.insert(root)
        }
    }

    /// Deletes version files no node refers to (left behind by a crash), except interrupted ranged downloads that
    /// can resume (``resumableDownloadFiles(state:)``).
    private func collectGarbage() {
        let referenced = state.withLock { state -> Set<String>? in
            var files = Set(state.nodes.values.compactMap(\.contentFile)
                + state.conflicts.values.flatMap { $0.map(\.contentFile) })
            if !state.stored.isComplete {
                // (Nodes not read yet refer to theirs in the store; if it cannot say, nothing is collected.)
                guard let stored = try? store.contentFiles() else { return nil }
                files.formUnion(stored)
            }
            return files.union(resumableDownloadFiles(state: &state))
        }
        guard let referenced else { return }
        for name in cache.allFiles() where !referenced.contains(name) && name != ContentCache.emptyVersion {
            cache.remove(name)
        }
    }

    var invalidator: (any KernelCacheInvalidator)? {
        let members = hooks.withLock { Array($0.invalidators.values) }
        if members.count <= 1 { return members.first }
        return InvalidatorSet(members: members)
    }
    var materializer: (any ContentMaterializing)? { hooks.withLock { $0.materializer } }
    var keeper: (any ContentKeeping)? { hooks.withLock { $0.keeper } }

    /// Connects the service that keeps pinned items downloaded and the cache within its limit.
    public func connect(keeper: any ContentKeeping) {
        hooks.withLock { $0.keeper = keeper }
    }

    /// Connects the service that brings remote changes in.
    public func connect(refresher: any RemoteRefreshing) {
        hooks.withLock { $0.refresher = refresher }
    }

    var refresher: (any RemoteRefreshing)? { hooks.withLock { $0.refresher } }

    /// What a change made stale in kernel caches.
    enum Invalidation {
        /// An inode's attributes and data.
        case inode(UInt64)
        /// A name in a folder.
        case entry(UInt64, String)
    }

    /// Tells the other mounts of this state (other views) about a change made through one of them. The kernel
    /// that made a change keeps its own caches right, so with one mount nothing is sent; with several, every
    /// mount is told (the originating one drops a cache entry it would have kept, which costs a lookup).
    func announce(_ invalidations: [Invalidation]) {
        let members = hooks.withLock { $0.invalidators.count > 1 ? Array($0.invalidators.values) : [] }
        for member in members {
            for invalidation in invalidations {
                switch invalidation {
                case .inode(let ino): member.invalidateInode(ino)
                case .entry(let parent, let name): member.invalidateEntry(parent: parent, name: name)
                }
            }
        }
    }

    func notifyUploader() {
        hooks.withLock { $0.uploader }?.uploadsPending()
    }

    /// Records a namespace or attribute change (create, mkdir, rename, unlink, times, mode, owner, xattrs) for
    /// the next group write: one transaction for every change of a short window (the configuration's
    /// `groupWriteDelay`, 20 ms by default) instead of one per request.
    /// The rows are written as the nodes and tombstones are at that moment, and every synchronous write
    /// (a commit, `fsync`, the uploader picking work) includes them first, so the store always holds a
    /// consistent state of the tree, never older than the last acknowledged commit. While the store is
    /// failing, the change is written at once instead and the operation fails with the store's error.
    ///
    /// Called before the caller changes `state`, like ``persist(_:durable:state:)``.
    func stage(_ batch: StoreBatch, state: inout State) throws(FolioError) {
        // References change rarely (a grant, a rename or unlink of one): written at once.
        if state.storeFailure != nil || !batch.referenceUpserts.isEmpty || !batch.referenceDeletes.isEmpty
            || !batch.conflictUpserts.isEmpty || !batch.conflictDeletes.isEmpty {
            try persist(batch, state: &state)
            return
        }
        for node in batch.upserts { state.unsavedNodes.insert(node.ino) }
        for ino in batch.deletes { state.unsavedNodes.insert(ino) }
        for tombstone in batch.tombstoneUpserts { state.unsavedTombstones.insert(tombstone.itemID) }
        for itemID in batch.tombstoneDeletes { state.unsavedTombstones.insert(itemID) }
        precondition(batch.values.isEmpty, "values are written at once")
        scheduleGroupWrite(state: &state)
    }

    /// Queues an attribute-only change of `ino` for the next group write (see ``stage(_:state:)``).
    func deferPersistence(_ ino: UInt64, state: inout State) {
        state.unsavedNodes.insert(ino)
        scheduleGroupWrite(state: &state)
    }

    func scheduleGroupWrite(state: inout State, after delay: Duration? = nil) {
        guard !state.groupWriteScheduled else { return }
        state.groupWriteScheduled = true
        let delay = delay ?? configuration.groupWriteDelay
        Task {
            try? await Task.sleep(for: delay)
            self.flushDeferredWrites()
        }
    }

    /// Writes the staged changes now (also called at unmount). A failure is logged and retried.
    public func flushDeferredWrites() {
        let queued = state.withLock { state -> (ticket: UInt64?, recovered: Bool)? in
            state.groupWriteScheduled = false
            let wasFailing = state.storeFailure != nil || storeWriter.hasFailed
            do {
                let ticket = try enqueuePersist(StoreBatch(), state: &state)
                return (ticket, wasFailing && ticket == nil)
            } catch {
                logger.error("cannot store the changes of the last moments, will retry: \(error)")
                scheduleGroupWrite(state: &state, after: .seconds(1))
                return nil
            }
        }
        guard let queued else { return }
        do {
            try writeStore(through: queued.ticket)
        } catch {
            return  // logged, retried
        }
        // The uploader holds back while the store fails; wake it once the store works again.
        if queued.recovered { notifyUploader() }
    }

    /// Deletes a version file no node refers to any more — once the store no longer refers to it either: after
    /// the next successful write (the caller's own, or the group write this schedules), so a crash or a failed
    /// write in between never leaves a row pointing at a missing file (garbage collection at start removes
    /// leftovers).
    func discardContent(_ file: String, state: inout State) {
        state.unsavedFileRemovals.append(file)
        scheduleGroupWrite(state: &state)
    }

    /// Writes the staged changes and `batch` in one transaction, `batch` last, before returning (through the
    /// ``StoreWriter``, after what it has queued): for changes that must be in the store before the state lock
    /// is released. `durable` syncs it to disk (an empty durable batch makes every earlier write durable). The
    /// in-memory state is changed by the caller only after this succeeds.
    func persist(_ batch: StoreBatch, durable: Bool = false, state: inout State) throws(FolioError) {
        takeBackFailedWrites(state: &state)
        let (combined, writesRecents) = combine(batch, state: &state)
        guard !combined.isEmpty || durable || !storeWriter.isIdle else {
            // Nothing staged: the discarded files go once what is queued is written.
            if !state.unsavedFileRemovals.isEmpty {
                _ = storeWriter.enqueue(StoreBatch(), durable: false, removals: state.unsavedFileRemovals)
                state.unsavedFileRemovals.removeAll()
                scheduleGroupWrite(state: &state)
            }
            return
        }
        do {
            try storeWriter.writeThrough(combined, durable: durable, removals: state.unsavedFileRemovals)
        } catch {
            logger.error("metadata store failed: \(error)")
            state.storeFailure = error
            throw error
        }
        state.unsavedNodes.removeAll()
        state.unsavedTombstones.removeAll()
        state.unsavedFileRemovals.removeAll()
        state.unsavedAnchors.removeAll()
        if writesRecents { state.virtual.lastUseUnsaved = false }
        state.storeFailure = nil
    }

    /// Runs `body` under the state lock once what the ``StoreWriter`` had queued is written, outside the lock: for
    /// work that writes the store through (``persist(_:durable:state:)``), which writes the queue first. So under
    /// the lock it waits for its own transaction only, never for someone's queued commit and its `fsync`. If batches
    /// are queued again before the lock is taken, it tries again; the third time `body` runs regardless.
    func withStateLockForWriteThrough<T, E: Error>(
        _ body: (inout State) throws(E) -> sending T
    ) throws(E) -> T {
        var attempt = 0
        while true {
            attempt += 1
            if !storeWriter.isIdle && !storeWriter.hasFailed {
                try? writeStore(through: storeWriter.lastTicket)  // a failure is logged; `body` then writes through
            }
            let last = attempt >= 3
            let outcome = state.withLock { state -> Result<T, E>? in
                guard last || storeWriter.isIdle || storeWriter.hasFailed else { return nil }
                do throws(E) { return .success(try body(&state)) } catch { return .failure(error) }
            }
            if let outcome { return try outcome.get() }
        }
    }

    /// Queues the staged changes and `batch` (node rows only) as one transaction for the ``StoreWriter``, with the
    /// version files to delete once it is written (the staged ones and those `commit` replaced); returns its ticket
    /// for ``writeStore(through:)``, which the caller calls after releasing the state lock. While the store fails,
    /// writes through instead (as ``persist(_:durable:state:)``: on error nothing is queued and the caller changes
    /// nothing) and returns `nil`. The caller changes the in-memory state right after this returns; if the queued
    /// transaction cannot be written, `commit` is undone (``undoCommit(_:state:)``).
    func enqueuePersist(
        _ batch: StoreBatch, durable: Bool = false, commit: QueuedCommit? = nil, state: inout State
    ) throws(FolioError) -> UInt64? {
        precondition(batch.values.isEmpty && batch.referenceUpserts.isEmpty
            && batch.referenceDeletes.isEmpty && batch.conflictUpserts.isEmpty && batch.conflictDeletes.isEmpty,
            "only node and tombstone rows and anchors are queued")
        if state.storeFailure != nil || storeWriter.hasFailed {
            try persist(batch, durable: durable, state: &state)
            for file in commit?.replaced ?? [] { cache.remove(file) }
            return nil
        }
        let (combined, writesRecents) = combine(batch, state: &state)
        let ticket = storeWriter.enqueue(
            combined, durable: durable, removals: state.unsavedFileRemovals, commit: commit)
        state.unsavedNodes.removeAll()
        state.unsavedTombstones.removeAll()
        state.unsavedFileRemovals.removeAll()
        state.unsavedAnchors.removeAll()
        if writesRecents { state.virtual.lastUseUnsaved = false }
        return ticket
    }

    /// Waits until the batch of `ticket` (from ``enqueuePersist(_:durable:removing:state:)``) and every one
    /// before it are written, writing them if nobody else is; `nil` returns at once. Called without the state
    /// lock. On a store error, the store counts as failing (every change is then written through), a group write
    /// retries, the queued commits are undone at once and the other queued changes stay in memory, to be written
    /// by the next write that works; the error is thrown.
    func writeStore(through ticket: UInt64?) throws(FolioError) {
        guard let ticket else { return }
        do {
            try storeWriter.write(through: ticket)
        } catch {
            logger.error("metadata store failed: \(error)")
            state.withLock { state in
                // Before the caller answers: a commit that could not be stored is not made.
                takeBackFailedWrites(state: &state)
                state.storeFailure = error
                scheduleGroupWrite(state: &state, after: .seconds(1))
            }
            throw error
        }
    }

    /// After a queued write failed: the commits it and those queued after it stored are undone (as a commit that
    /// fails under the lock: the item keeps its version, the session its changes), their rows are staged again,
    /// to be written from memory by the next write, and their version file removals wait for it.
    private func takeBackFailedWrites(state: inout State) {
        guard storeWriter.hasFailed else { return }
        let (batches, removals, commits) = storeWriter.takeBack()
        var kept: [String] = []
        for commit in commits.reversed() where !undoCommit(commit, state: &state) {
            kept += commit.replaced  // still made: the files it replaced go once it is written
        }
        for batch in batches {
            for node in batch.upserts { state.unsavedNodes.insert(node.ino) }
            for ino in batch.deletes { state.unsavedNodes.insert(ino) }
            for tombstone in batch.tombstoneUpserts { state.unsavedTombstones.insert(tombstone.itemID) }
            for itemID in batch.tombstoneDeletes { state.unsavedTombstones.insert(itemID) }
            if batch.values[VirtualFolderState.storeKey] != nil { state.virtual.lastUseUnsaved = true }
            state.unsavedAnchors.merge(batch.anchors) { _, later in later }  // (the batches come in order)
        }
        state.unsavedFileRemovals = removals + kept + state.unsavedFileRemovals
    }

    /// The staged rows (as the nodes and tombstones are now) and `batch`, `batch` last; whether it carries the
    /// recents.
    private func combine(_ batch: StoreBatch, state: inout State) -> (StoreBatch, Bool) {
        var combined = StoreBatch()
        for ino in state.unsavedNodes {
            if let node = state.nodes[ino] {
                combined.upserts.append(node)
            } else {
                combined.deletes.append(ino)
            }
        }
        for itemID in state.unsavedTombstones {
            if let tombstone = state.tombstones[itemID] {
                combined.tombstoneUpserts.append(tombstone)
            } else {
                combined.tombstoneDeletes.append(itemID)
            }
        }
        // The store applies upserts before deletes: a staged delete of a row `batch` writes again must not
        // win over it, and a staged upsert must not win over a delete in `batch`.
        let rewritten = Set(batch.upserts.map(\.ino))
        combined.deletes.removeAll { rewritten.contains($0) }
        let deleted = Set(batch.deletes)
        combined.upserts.removeAll { deleted.contains($0.ino) }
        let rewrittenTombstones = Set(batch.tombstoneUpserts.map(\.itemID))
        combined.tombstoneDeletes.removeAll { rewrittenTombstones.contains($0) }
        let deletedTombstones = Set(batch.tombstoneDeletes)
        combined.tombstoneUpserts.removeAll { deletedTombstones.contains($0.itemID) }
        combined.upserts += batch.upserts
        combined.deletes += batch.deletes
        noteDescriptionWork(
            combined.upserts.lazy.filter { $0.kind == .file || $0.kind == .directory }.map(\.ino) + combined.deletes,
            state: &state)
        combined.tombstoneUpserts += batch.tombstoneUpserts
        combined.tombstoneDeletes += batch.tombstoneDeletes
        combined.values = batch.values
        combined.anchors = state.unsavedAnchors.merging(batch.anchors) { $1 }
        // Recents go with group writes only (an empty `batch`), not with every commit.
        let writesRecents = state.virtual.lastUseUnsaved && batch.isEmpty
        if writesRecents {
            combined.values[VirtualFolderState.storeKey] = state.virtual.encodedLastUse()
        }
        combined.referenceUpserts = batch.referenceUpserts
        combined.referenceDeletes = batch.referenceDeletes
        combined.conflictUpserts = batch.conflictUpserts
        combined.conflictDeletes = batch.conflictDeletes
        return (combined, writesRecents)
    }

    /// Makes every change so far durable on disk (`fsync` of a folder, `syncfs`).
    public func synchronizeMetadata() throws(FolioError) {
        let ticket = try state.withLock { state throws(FolioError) in
            try enqueuePersist(StoreBatch(), durable: true, state: &state)
        }
        try writeStore(through: ticket)
    }
}

extension FolioFileSystem {
    /// The process (thread-group) id of a thread id from a request.
    public func processID(ofThread tid: Int32) -> Int32 {
        processIdentity.processID(ofThread: tid)
    }
}
