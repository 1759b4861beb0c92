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
}

/// Tunables of the filesystem core.
public struct FileSystemConfiguration: Sendable {
    /// How long a second writer waits for the first one's session to end before `EBUSY`.
    public var writeWaitTimeout: Duration
    /// The user id of items the provider sends (they carry no owner).
    public var defaultUID: UInt32
    /// The group id of items the provider sends.
    public var defaultGID: UInt32
    /// Names the provider can store.
    public var namePolicy: NamePolicy

    /// Creates a configuration.
    public init(
        writeWaitTimeout: Duration = .seconds(10), defaultUID: UInt32 = 0, defaultGID: UInt32 = 0,
        namePolicy: NamePolicy = NamePolicy()
    ) {
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
/// All state lives behind one lock that is never held across an `await` or a provider call.
public final class FolioFileSystem: Sendable {
    /// The inode of the full view's root (the Drive container's root).
    public static let rootIno: UInt64 = 1

    let state: Mutex<State>
    let store: any MetadataStore
    let cache: ContentCache
    let configuration: FileSystemConfiguration
    let logger: Logger
    let hooks = Mutex<Hooks>(Hooks())
    let processIdentity = ProcessIdentity()

    struct Hooks: Sendable {
        var materializer: (any ContentMaterializing)?
        var uploader: (any UploadScheduling)?
        var invalidator: (any KernelCacheInvalidator)?
    }

    /// Opens the filesystem over a store and a content cache, loading every node into memory.
    public init(
        store: any MetadataStore, cache: ContentCache, configuration: FileSystemConfiguration = .init(),
        logger: Logger
    ) throws(FolioError) {
        self.store = store
        self.cache = cache
        self.configuration = configuration
        self.logger = logger
        let snapshot = try store.load()
        var state = State()
        for node in snapshot.nodes {
            state.insert(node)
        }
        for tombstone in snapshot.tombstones {
            state.tombstones[tombstone.itemID] = tombstone
            state.nextSequence = max(state.nextSequence, tombstone.sequence + 1)
        }
        state.values = snapshot.values
        self.state = Mutex(state)
        try ensureRoot()
        collectGarbage()
    }

    /// Connects the services the core calls back into.
    public func connect(
        materializer: (any ContentMaterializing)?, uploader: (any UploadScheduling)?,
        invalidator: (any KernelCacheInvalidator)?
    ) {
        hooks.withLock {
            $0.materializer = materializer
            $0.uploader = uploader
            $0.invalidator = invalidator
        }
    }

    private func ensureRoot() throws(FolioError) {
        try state.withLock { state throws(FolioError) in
            guard state.nodes[Self.rootIno] == nil else { return }
            let now = Timestamp.now()
            let root = Node(
                ino: Self.rootIno, itemID: .root(of: .drive), container: .drive, parent: 0, name: "",
                kind: .directory, modificationTime: now, mode: 0o755, uid: configuration.defaultUID,
                gid: configuration.defaultGID, state: .materialized, remoteVersion: "root")
            var batch = StoreBatch()
            batch.upserts.append(root)
            try store.apply(batch, durable: true)
            state.insert(root)
        }
    }

    /// Deletes version files no node refers to (left behind by a crash).
    private func collectGarbage() {
        let referenced = state.withLock { state in Set(state.nodes.values.compactMap(\.contentFile)) }
        for name in cache.allFiles() where !referenced.contains(name) && name != ContentCache.emptyVersion {
            cache.remove(name)
        }
    }

    var invalidator: (any KernelCacheInvalidator)? { hooks.withLock { $0.invalidator } }
    var materializer: (any ContentMaterializing)? { hooks.withLock { $0.materializer } }

    func notifyUploader() {
        hooks.withLock { $0.uploader }?.uploadsPending()
    }

    /// How long attribute-only changes may wait before they are written together.
    static let deferredWriteDelay = Duration.milliseconds(20)

    /// Queues an attribute-only change of `ino` for the next group write (one transaction for many changes,
    /// e.g. the utimens, chmod and chown `tar` sends for every file). The node in memory is already current;
    /// the group write stores the node as it is then, so it never overwrites a newer row.
    func deferPersistence(_ ino: UInt64, state: inout State) {
        state.deferredInos.insert(ino)
        guard !state.deferredFlushScheduled else { return }
        state.deferredFlushScheduled = true
        Task {
            try? await Task.sleep(for: Self.deferredWriteDelay)
            self.flushDeferredWrites()
        }
    }

    /// Writes the queued attribute-only changes now (also called at unmount).
    public func flushDeferredWrites() {
        state.withLock { state in
            state.deferredFlushScheduled = false
            guard !state.deferredInos.isEmpty else { return }
            var batch = StoreBatch()
            batch.upserts = state.deferredInos.compactMap { state.nodes[$0] }
            state.deferredInos.removeAll()
            do {
                try persist(batch)
            } catch {
                logger.error("cannot store attribute changes of \(batch.upserts.count) items: \(error)")
            }
        }
    }

    /// Writes `batch` to the store; the in-memory state is changed by the caller only after this succeeds.
    func persist(_ batch: StoreBatch, durable: Bool = false) throws(FolioError) {
        guard !batch.isEmpty else { return }
        do {
            try store.apply(batch, durable: durable)
        } catch {
            logger.error("metadata store failed: \(error)")
            throw error
        }
    }
}

extension FolioFileSystem {
    /// The process (thread-group) id of a thread id from a request.
    public func processID(ofThread tid: Int32) -> Int32 {
        processIdentity.processID(ofThread: tid)
    }
}
