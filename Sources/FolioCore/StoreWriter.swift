import Synchronization

/// The one way the core's changes reach the metadata store: batches are queued in the order the core made them
/// (under its state lock, which only appends to the queue) and written in that order by whoever waits for them,
/// outside the state lock. So a `stat` or an `open` never waits for a transaction or its `fsync`.
///
/// Each batch is one transaction; a durable batch is synced to disk (and with it every earlier one). A version
/// file that a batch stops referring to is deleted only after that batch is written. When a batch cannot be
/// written, nothing after it is written either (the store keeps a prefix of the core's history, never a gap):
/// every write fails at once until the core takes the queued batches back (``takeBack()``, under its state lock)
/// to write their rows again from memory.
///
/// Lock order (written once, here; see also ``SessionGate``): a session gate, then the core's state lock
/// (`FolioFileSystem.state`), then ``writing``, then ``queue``. Holders of the state lock take only ``queue``,
/// except to write through (``writeThrough(_:durable:removals:)``: a change that must be in the store before
/// the lock is released, and every change while the store fails). The writer never takes the state lock or a
/// gate, so nothing it waits for (SQLite, `fsync`) can hold up what waits for the state lock, except a
/// write-through.
final class StoreWriter: Sendable {
    /// A batch waiting to be written.
    private struct Pending: Sendable {
        let ticket: UInt64
        let batch: StoreBatch
        let durable: Bool
        let removals: [String]
        /// The commit this batch stores, if it does (its replaced files go with ``removals``).
        let commit: QueuedCommit?
    }

    /// The queue and what is known of the writes.
    private struct Queue: Sendable {
        var pending: [Pending] = []
        var nextTicket: UInt64 = 1
        /// Every batch up to this ticket is in the store.
        var written: UInt64 = 0
        /// Why the batch at the head could not be written, until the core takes the queue back.
        var failure: FolioError?
        /// Tickets of batches taken back after a failure (not written by this writer), and why: their waiters fail.
        var abandoned: [(tickets: ClosedRange<UInt64>, error: FolioError)] = []

        /// Whether `ticket` is settled: written, or taken back (then the error).
        func outcome(of ticket: UInt64) -> Result<Void, FolioError>? {
            guard ticket <= written else { return nil }
            if let lost = abandoned.last(where: { $0.tickets.contains(ticket) }) { return .failure(lost.error) }
            return .success(())
        }
    }

    private let store: any MetadataStore
    private let cache: ContentCache
    private let beforeWrite: (@Sendable (_ durable: Bool) -> Void)?
    /// Held while a batch is written (the writer is serial).
    private let writing = Mutex<Void>(())
    private let queue = Mutex<Queue>(Queue())

    /// A writer into `store`; `beforeWrite` runs just before each transaction (a test hook).
    init(store: any MetadataStore, cache: ContentCache, beforeWrite: (@Sendable (_ durable: Bool) -> Void)?) {
        self.store = store
        self.cache = cache
        self.beforeWrite = beforeWrite
    }

    /// Queues `batch` (and the version files to delete once it is written: `removals` and those `commit`
    /// replaced); returns its ticket for ``write(through:)``. Cheap: called under the state lock.
    func enqueue(_ batch: StoreBatch, durable: Bool, removals: [String], commit: QueuedCommit? = nil) -> UInt64 {
        queue.withLock { queue in
            defer { queue.nextTicket += 1 }
            queue.pending.append(
                Pending(ticket: queue.nextTicket, batch: batch, durable: durable, removals: removals, commit: commit))
            return queue.nextTicket
        }
    }

    /// The ticket of the last batch queued (0 if none was).
    var lastTicket: UInt64 { queue.withLock { $0.nextTicket - 1 } }

    /// Whether nothing waits to be written.
    var isIdle: Bool { queue.withLock { $0.pending.isEmpty } }

    /// Whether a queued batch could not be written (the queue waits for ``takeBack()``).
    var hasFailed: Bool { queue.withLock { $0.failure != nil } }

    /// Empties the queue after a failure: the batches not written, the version files they would have deleted (but
    /// those of commits) and the commits they stored, oldest first, for the core to undo the commits and write the
    /// rest again from memory (under its state lock, so nothing is queued meanwhile).
    func takeBack() -> (batches: [StoreBatch], removals: [String], commits: [QueuedCommit]) {
        queue.withLock { queue in
            defer {
                if let first = queue.pending.first {
                    queue.abandoned.append((first.ticket...queue.nextTicket - 1, queue.failure ?? .io("store write")))
                }
                queue.pending.removeAll()
                queue.written = queue.nextTicket - 1
                queue.failure = nil
            }
            return (queue.pending.map(\.batch), queue.pending.flatMap(\.removals), queue.pending.compactMap(\.commit))
        }
    }

    /// Writes every queued batch up to `ticket` (and any before it), in order; returns once they are in the store.
    /// Never call it holding the state lock. Throws the store's error if one of them cannot be written.
    func write(through ticket: UInt64) throws(FolioError) {
        if let outcome = queue.withLock({ $0.outcome(of: ticket) }) { return try outcome.get() }
        // The files go after `writing` is released: a write-through waiting for it does not wait for an unlink.
        var removals: [String] = []
        defer { for file in removals { cache.remove(file) } }
        try writing.withLock { _ throws(FolioError) in try drain(through: ticket, removals: &removals) }
        if let outcome = queue.withLock({ $0.outcome(of: ticket) }) { try outcome.get() }
    }

    /// Writes the queued batches, then `batch`, before returning (under the state lock: a change that must be in
    /// the store before anything else happens, or any change while the store fails). If it throws, `batch` was
    /// not written and its removals were not done.
    func writeThrough(_ batch: StoreBatch, durable: Bool, removals: [String]) throws(FolioError) {
        var written: [String] = []
        defer { for file in written { cache.remove(file) } }
        try writing.withLock { _ throws(FolioError) in
            try drain(through: .max, removals: &written)
            try apply(batch, durable: durable)
            written += removals
        }
    }

    /// Writes queued batches in order up to `ticket`; `writing` is held. Adds to `removals` the version files the
    /// written batches stopped referring to (the caller deletes them, also when a later batch fails).
    private func drain(through ticket: UInt64, removals: inout [String]) throws(FolioError) {
        while true {
            let next = try queue.withLock { queue throws(FolioError) -> Pending? in
                if let failure = queue.failure { throw failure }
                guard let first = queue.pending.first, first.ticket <= ticket else { return nil }
                return first
            }
            guard let next else { return }
            do {
                try apply(next.batch, durable: next.durable)
            } catch {
                queue.withLock { $0.failure = error }
                throw error
            }
            queue.withLock { queue in
                queue.pending.removeFirst()
                queue.written = next.ticket
            }
            removals += next.removals + (next.commit?.replaced ?? [])
        }
    }

    /// One transaction (none for an empty batch that need not be durable).
    private func apply(_ batch: StoreBatch, durable: Bool) throws(FolioError) {
        guard !batch.isEmpty || durable else { return }
        beforeWrite?(durable)
        try store.apply(batch, durable: durable)
    }
}
