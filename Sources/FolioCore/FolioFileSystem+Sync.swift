import Foundation
import SystemPackage

/// A download the materializer has to do.
public struct MaterializationTicket: Sendable {
    /// The node being materialized.
    public var ino: UInt64
    /// Its item.
    public var itemID: ItemID
    /// Its container.
    public var container: ContainerID
    /// The version to download.
    public var version: String
    /// Expected size.
    public var size: Int64
    /// The version file to download into.
    public var fileName: String
    /// Path of that file.
    public var path: FilePath
}

/// One piece of work for the uploader.
public enum UploadWork: Sendable {
    /// Create an item the provider has never seen.
    case create(ino: UInt64, template: RemoteItemTemplate, contents: FilePath?, generation: UInt64, epoch: UInt64)
    /// Send a new version and/or metadata changes.
    case modify(
        ino: UInt64, itemID: ItemID, container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?, generation: UInt64, epoch: UInt64)
    /// Delete an item; the retry tag names this writer and the delete's base version.
    case delete(Tombstone, retryTag: String)

    /// Closes the descriptor the work reads its content through (after the provider call).
    public func closeContents() {
        var path: FilePath?
        switch self {
        case .create(_, _, let contents, _, _): path = contents
        case .modify(_, _, _, _, _, let contents, _, _): path = contents
        case .delete: path = nil
        }
        guard let path, let last = path.lastComponent, path.string.hasPrefix("/proc/self/fd/"),
              let fd = Int32(last.string) else { return }
        close(fd)
    }

    /// A short description for logs.
    public var summary: String {
        switch self {
        case .create(let ino, let template, _, let generation, _):
            return "create \(template.name) (inode \(ino), generation \(generation))"
        case .modify(let ino, let itemID, _, _, let changes, let contents, let generation, _):
            return "modify \(itemID) (inode \(ino), generation \(generation), content: \(contents != nil), "
                + "metadata: \(!changes.isEmpty))"
        case .delete(let tombstone, _): return "delete \(tombstone.itemID)"
        }
    }
}

/// Counts for `folio status`.
public struct FileSystemStatus: Sendable, Codable {
    /// Items per state name.
    public var states: [String: Int]
    /// Changes waiting for upload (items and deletes).
    public var pendingUploads: Int
    /// Uploads running now.
    public var uploadsInFlight: Int
    /// Whether the provider answered last time.
    public var providerOnline: Bool
    /// The last provider error, if any.
    public var lastProviderError: String?
    /// Items whose upload failed in a way that needs the user (`path: reason (needs you: what to do)`, at most
    /// 20), until they are retried (`folio retry`, a mount) or changed again.
    public var failures: [String] = []
    /// Items whose last upload failed in a way that clears by itself (`path: error (what it waits for)`, at most
    /// 20): retried with a capped backoff.
    public var waiting: [String] = []
    /// Of ``pendingUploads``, those that wait for the user: `failed` items, changes the remote refused until the
    /// user acts, and what is inside a folder whose create was refused. Not retried until `folio retry`, a new
    /// change or the next mount (`folio unmount --wait` does not wait for them).
    public var waitingForUser = 0
    /// Folders whose children were listed from the provider (the working set), container roots included.
    public var foldersListed = 0
    /// Folders known but never listed: their children cost nothing until they are looked at.
    public var foldersNotListed = 0
    /// What the remote cannot do (``Provider/limitations()``).
    public var providerLimitations: [String] = []
    /// The last reads that failed because the version they read is gone from the remote (`path: reason`).
    public var readFailures: [String] = []
}

extension FolioFileSystem {
    // MARK: Materialization

    /// Starts a download of `ino`'s content, or returns `nil` if the content is already here.
    public func beginMaterialization(_ ino: UInt64) throws(FolioError) -> MaterializationTicket? {
        try state.withLock { state throws(FolioError) in
            guard var node = state.node(ino) else { throw .notFound("inode \(ino)") }
            guard !node.state.hasLocalContent else { return nil }
            guard let version = node.remoteVersion else { throw .io("\(node.name) has no content anywhere") }
            let file = try cache.makeFile()
            close(file.fd)
            try node.apply(.materializeStarted)
            state.nodes[ino] = node
            state.progress[ino] = (0, node.size)
            // (From the container the provider holds it in: a move across containers may wait for upload.)
            return MaterializationTicket(
                ino: ino, itemID: node.itemID, container: node.remoteContainer ?? node.container, version: version,
                size: node.size,
                fileName: file.name, path: cache.path(of: file.name))
        }
    }

    /// Records download progress (shown in `user.folio.progress`).
    public func recordProgress(_ ino: UInt64, done: Int64, total: Int64) {
        state.withLock { $0.progress[ino] = (done, total) }
    }

    /// Ends a download: installs the file as the item's content on success, or leaves the placeholder intact.
    public func finishMaterialization(_ ticket: MaterializationTicket, result: Result<RemoteItem, FolioError>) {
        let installed = state.withLock { state -> Bool in
            state.progress[ticket.ino] = nil
            guard var node = state.node(ticket.ino) else {
                cache.remove(ticket.fileName)
                return false
            }
            switch result {
            case .success(let item) where node.remoteVersion == ticket.version && !node.state.hasLocalContent:
                let placeholder = node
                var size: Int64 = 0
                var info = stat()
                if stat(ticket.path.string, &info) == 0 { size = Int64(info.st_size) }
                node.contentFile = ticket.fileName
                node.size = size
                node.remoteVersion = item.version
                do {
                    try node.apply(.materializeFinished)
                    try save(node, state: &state)
                    keeper?.contentChanged()
                    return true
                } catch {
                    // The node stays the placeholder it was (no longer downloading).
                    logger.error("cannot record materialized \(node.name): \(error)")
                    node = placeholder
                    do {
                        try node.apply(.materializeFailed)
                    } catch {
                        logger.error("\(node.name) stays \(node.state.name): \(error)")  // (placeholders allow it)
                    }
                    state.nodes[ticket.ino] = node
                    cache.remove(ticket.fileName)
                }
            case .success:
                cache.remove(ticket.fileName)
            case .failure(let error):
                cache.remove(ticket.fileName)
                if node.state == .materializing {
                    do {
                        try node.apply(.materializeFailed)
                        state.nodes[ticket.ino] = node
                    } catch {
                        logger.error("\(node.name) stays \(node.state.name): \(error)")  // (materializing allows it)
                    }
                }
                if case .offline = error {
                    state.providerOnline = false
                    state.lastProviderError = error.description
                }
            }
            return false
        }
        // The content is local now: the blocks `stat` reports changed (see ``attributes(of:state:handle:)``).
        if installed { invalidator?.invalidateInode(ticket.ino) }
    }

    // MARK: Upload

    /// Up to `limit` pieces of upload work, oldest change first, skipping what is in flight, files still
    /// being written, and children whose parent the provider does not have yet.
    public func nextUploadWork(limit: Int) -> [UploadWork] {
        nextUploadCalls(limit: limit, createsPerCall: 1, smallerThan: 0).flatMap { $0 }
    }

    /// Up to `limit` provider calls' worth of upload work, oldest change first, as ``nextUploadWork(limit:)``:
    /// each element is one call. Creates of folders, symlinks and files under `smallerThan` bytes go up to
    /// `createsPerCall` to a call (``Provider/createItems(_:)``); everything else goes alone.
    public func nextUploadCalls(limit: Int, createsPerCall: Int, smallerThan: Int64) -> [[UploadWork]] {
        // Nothing reaches the provider before the store has it: staged changes of what waits for upload are
        // written first (not those of finished uploads: a burst of uploads does not write the store once each),
        // and so are queued ones (a commit's), both outside the lock as far as possible. Nothing goes while the
        // store fails.
        let ticket = state.withLock { state -> UInt64? in
            guard state.storeFailure == nil, !storeWriter.hasFailed, hasUnsavedUploadWork(state) else { return nil }
            return try? enqueuePersist(StoreBatch(), state: &state)
        }
        try? writeStore(through: ticket)  // a failure is logged; then nothing goes below
        return withStateLockForWriteThrough { state in
            if hasUnsavedUploadWork(state) || state.storeFailure != nil || !storeWriter.isIdle {
                do {
                    try persist(StoreBatch(), state: &state)
                } catch {
                    return []
                }
            }
            // Candidates come from the two upload orders (nodes and deletes), oldest first; those that cannot go
            // now are put back afterwards, so each call looks only at the front of the queues.
            var calls: [[UploadWork]] = []
            // The call that takes more creates, if any.
            var sharedCall: Int?
            var skippedNodes: [UInt64] = []
            var skippedTombstones: [Tombstone] = []
            defer {
                skippedNodes.forEach { state.nodes.requeue($0) }
                skippedTombstones.forEach { state.tombstones.requeue($0) }
            }
            let now = saveNow
            // Once a delete waits for an editor's save, later deletes wait behind it (a folder's after its files').
            var deletesHeld = false
            while calls.count < limit || sharedCall.map({ calls[$0].count < createsPerCall }) ?? false {
                let nodeSequence = state.nodes.oldestPendingSequence()
                let tombstoneSequence = deletesHeld ? nil : state.tombstones.oldestSequence()
                if let tombstoneSequence, nodeSequence.map({ tombstoneSequence < $0 }) ?? true {
                    guard let tombstone = state.tombstones.popOldest() else { continue }
                    if state.saves.isHeld(tombstone.itemID, now: now) {
                        // A file the same process creates at the name moments later takes the item over.
                        skippedTombstones.append(tombstone)
                        deletesHeld = true
                        continue
                    }
                    // A delete waits for an upload of its item still running (it may create the item), and for
                    // a call of its own.
                    if calls.count >= limit || state.sync.isInFlight(tombstone.itemID) {
                        skippedTombstones.append(tombstone)
                        if calls.count >= limit { break }
                        continue
                    }
                    state.sync.deleteStarted(tombstone.itemID)
                    calls.append([.delete(tombstone, retryTag: retryTag(base: tombstone.remoteVersion))])
                    continue
                }
                guard nodeSequence != nil, let node = state.nodes.popOldestPending() else { break }
                guard isReadyForUpload(node, state: state), !isHeldForSave(node, now: now, state: state),
                      !waitsForDeleteAtItsName(node, state: &state), let parent = state.nodes[node.parent] else {
                    skippedNodes.append(node.ino)
                    continue
                }
                let shares = createsPerCall > 1 && node.remoteVersion == nil
                    && (node.kind != .file || node.size < smallerThan)
                let call: Int
                if shares, let shared = sharedCall, calls[shared].count < createsPerCall {
                    call = shared
                } else if calls.count < limit {
                    call = calls.count
                } else {
                    skippedNodes.append(node.ino)  // no call left for it
                    break
                }
                let work: UploadWork?
                do throws(FolioError) {
                    work = try makeWork(node, parent: parent, state: state)
                } catch {
                    if contentUnreadable(node, error, state: &state) { skippedNodes.append(node.ino) }
                    continue
                }
                guard let item = work else {
                    skippedNodes.append(node.ino)
                    continue
                }
                state.sync.uploadStarted(node.itemID)
                if case .dirty(let current) = node.state {
                    var uploading = node
                    do {
                        try uploading.apply(.uploadStarted(generation: current))
                        state.nodes[node.ino] = uploading
                    } catch {
                        logger.error("\(node.name) uploads as \(node.state.name): \(error)")  // (dirty allows it)
                    }
                    state.nodes.holdBack(node.ino)  // not looked at again by every call while it is in flight
                }
                if call == calls.count {
                    calls.append([item])
                    if shares { sharedCall = call }
                } else {
                    calls[call].append(item)
                }
            }
            return calls
        }
    }

    /// Whether a pending node can be uploaded now: not in flight, not being written, not waiting for a
    /// decision (conflicted, failed, a change refused until the user acts), and its parent known to the provider.
    /// Whether the upload of `node` puts it at a name another item's pending delete frees on the remote (an item
    /// removed here, and a new one made at its name): it waits for that delete, which wakes the uploader when it
    /// ends, instead of clashing with the name and being retried.
    private func waitsForDeleteAtItsName(_ node: Node, state: inout State) -> Bool {
        if state.sync.namesFreedByDeletes.isEmpty { return false }
        let tombstones = state.tombstones
        let deletesInFlight = state.sync.deletesInFlight
        return state.sync.deleteFreeing(.init(parent: node.parent, name: node.name), for: node.itemID) { other in
            tombstones[other] != nil || deletesInFlight.contains(other)
        } != nil
    }

    private func isReadyForUpload(_ node: Node, state: borrowing State) -> Bool {
        if state.sync.uploadsInFlight.contains(node.itemID) { return false }
        if let session = state.sessions[node.ino], !session.handles.isEmpty { return false }
        if case .conflicted = node.state { return false }
        if case .failed = node.state { return false }
        if state.isHeldForUser(node) { return false }
        guard let parent = state.nodes[node.parent], parent.remoteVersion != nil else { return false }
        return true
    }

    /// A file's committed content could not be opened for its upload (`error`); never sent without it. For a
    /// passing reason (`.busy`: out of descriptors, say) the work waits and the uploader tries again after a
    /// backoff (``takeDeferredUploads()``): returns true. Otherwise (gone from the state folder, unreadable) the
    /// item is `failed` with the reason until a new version is committed: returns false.
    private func contentUnreadable(_ node: Node, _ error: FolioError, state: inout State) -> Bool {
        if case .busy = error {
            logger.warning("cannot upload \(node.name) yet: \(error)")
            state.sync.uploadDeferred()
            return true
        }
        let reason = if case .notFound = error {
            "its committed content is missing from the content cache (needs you: save the file again)"
        } else {
            "its committed content cannot be read: \(error) (needs you: save the file again, or run `folio retry "
                + "PATH` once it can be read)"
        }
        logger.error("cannot upload \(node.name): \(reason)")
        var failed = node
        do {
            try failed.apply(.contentUnreadable(reason: reason))
        } catch {
            // (Only local content is uploaded, and every state with it allows this.) It stays pending as it is.
            logger.error("\(node.name) stays \(node.state.name): \(error)")
            return true
        }
        state.nodes[node.ino] = failed
        saveDeferred(failed, state: &state)
        return false
    }

    /// How many times upload work was held back because its content could not be opened for a passing reason.
    public var deferredUploadCount: Int { state.withLock { $0.sync.deferredUploadCount } }

    /// Whether upload work was held back since the last call because its content could not be opened for a
    /// passing reason: the uploader then tries again after a backoff, even if nothing else changes.
    public func takeDeferredUploads() -> Bool {
        state.withLock { $0.sync.takeDeferredUploads() }
    }

    private func makeWork(_ node: Node, parent: Node, state: borrowing State) throws(FolioError) -> UploadWork? {
        let parentID: ItemID? = parent.itemID.isContainerRoot ? nil : parent.itemID
        let epoch = state.metadataEpochs[node.ino] ?? 0
        // The upload reads the version through a descriptor opened now, so a newer commit that deletes the
        // version file meanwhile cannot pull it away from under the provider.
        // Only when content is sent: a metadata-only change has nobody to close it.
        var contentDirty = false
        if case .dirty = node.state { contentDirty = true }
        if case .uploading = node.state { contentDirty = true }
        var contents: FilePath?
        if node.kind == .file, node.remoteVersion == nil || contentDirty, let file = node.contentFile {
            // Never sent without its content (that would upload an empty file): the caller decides.
            contents = FilePath("/proc/self/fd/\(try cache.openForReading(file))")
        }
        if node.remoteVersion == nil {
            let template = RemoteItemTemplate(
                id: node.itemID, container: node.container, parentID: parentID, name: node.name, kind: node.kind,
                modificationTime: node.modificationTime, mode: node.mode, symlinkTarget: node.symlinkTarget,
                retryTag: retryTag(base: nil))
            return .create(ino: node.ino, template: template, contents: contents, generation: node.generation, epoch: epoch)
        }
        var changes = RemoteItemChanges()
        if node.metadataDirty {
            changes = RemoteItemChanges(
                container: node.container, parentID: .some(parentID), name: node.name, mode: node.mode,
                modificationTime: node.modificationTime)
        } else if node.timeDirty {
            // A folder's time sent again: its name, place and mode are the remote's (another device's change).
            changes = RemoteItemChanges(modificationTime: node.modificationTime)
        }
        // (An item just created sends its tags with the modify after its create.)
        changes.tags = node.pendingTagUpdate
        if !contentDirty && changes.isEmpty { return nil }
        changes.retryTag = retryTag(base: node.remoteVersion)
        return .modify(
            ino: node.ino, itemID: node.itemID, container: node.remoteContainer ?? node.container,
            baseVersion: node.remoteVersion!,
            changes: changes, contents: contentDirty ? contents : nil, generation: node.generation, epoch: epoch)
    }

    /// The retry tag of an upload or delete from `base` (`nil`: the item was never known to be created): this
    /// writer and the version it started from.
    private func retryTag(base: String?) -> String { "\(writerID)@\(base ?? "new")" }

    /// Whether staged (not yet queued) changes concern what waits for upload.
    private func hasUnsavedUploadWork(_ state: State) -> Bool {
        state.unsavedTombstones.contains { state.tombstones[$0] != nil }
            || state.unsavedNodes.contains { state.nodes.pending.contains($0) }
    }

    /// Records the outcome of a piece of upload work.
    @discardableResult
    public func finishUpload(_ work: UploadWork, result: Result<RemoteItem?, FolioError>) -> UploadFailure? {
        withStateLockForWriteThrough { state in recordUpload(work, result: result, state: &state) }
    }

    /// Records the outcomes of several pieces of upload work (one provider call's) under one hold of the lock.
    /// Returns how the core takes each failure, in order (``finishUpload(_:result:)``).
    @discardableResult
    public func finishUploads(
        _ outcomes: [(work: UploadWork, result: Result<RemoteItem?, FolioError>)]
    ) -> [UploadFailure?] {
        withStateLockForWriteThrough { state in
            outcomes.map { work, result in recordUpload(work, result: result, state: &state) }
        }
    }

    /// Records how an upload ended; returns how its failure is taken (`nil`: nothing is retried).
    private func recordUpload(
        _ work: UploadWork, result: Result<RemoteItem?, FolioError>, state: inout State
    ) -> UploadFailure? {
        switch result {
        case .success:
            state.providerOnline = true
            state.lastProviderError = nil
            state.sync.remoteChanged()
        case .failure(let error):
            if case .offline = error { state.providerOnline = false }
            state.lastProviderError = error.description
        }
        switch work {
        case .delete(let tombstone, _):
            state.sync.deleteEnded(tombstone.itemID)
            var success = false
            if case .success = result { success = true }
            if case .failure(.notFound) = result { success = true }
            var removed = false
            if success {
                // Forgotten with the next group write (lost in a crash, the delete is made again: the item
                // is gone by then, which is fine).
                var batch = StoreBatch()
                batch.tombstoneDeletes.append(tombstone.itemID)
                if (try? stage(batch, state: &state)) != nil {
                    state.tombstones[tombstone.itemID] = nil
                    removed = true
                }
                perform(state.sync.changeLanded(tombstone.itemID), state: &state)
            }
            if case .failure(.conflict(let reason)) = result {
                // Deleted here, changed on the remote: the remote version is kept (the poller takes the item
                // again and brings it back); a delete never destroys a change nobody here has seen.
                logger.warning("not deleting \(tombstone.itemID) on the remote, it changed there: \(reason)")
                var batch = StoreBatch()
                batch.tombstoneDeletes.append(tombstone.itemID)
                if (try? persist(batch, state: &state)) != nil {
                    state.tombstones[tombstone.itemID] = nil
                    removed = true
                    perform(state.sync.takeAgain(tombstone.itemID, in: tombstone.container), state: &state)
                }
            }
            // Not done: back into the upload order, to be retried (whatever the reason: a delete has no state to
            // hold it back in).
            guard removed else {
                state.tombstones.requeue(tombstone)
                return .willClear(remedy: "retried until the remote deletes it")
            }
            state.sync.deleteNoLongerPending(tombstone.itemID)
            return nil
        case .create(let ino, let template, _, let generation, let epoch):
            let timeResentMeanwhile = state.sync.uploadEnded(template.id)
            // A retried create whose first attempt landed answers with the item where that attempt put it.
            var placed = true
            if case .success(let item?) = result {
                placed = item.name == template.name && item.parentID == template.parentID
                    && item.container == template.container
            }
            return finishItemUpload(
                ino: ino, itemID: template.id, container: template.container, generation: generation,
                epoch: epoch, contentSent: true, placed: placed, timeResentMeanwhile: timeResentMeanwhile,
                result: result, state: &state)
        case .modify(let ino, let itemID, let container, _, let changes, let contents, let generation, let epoch):
            let timeResentMeanwhile = state.sync.uploadEnded(itemID)
            if let sent = changes.tags, case .success(let item) = result {
                tagUpdateLanded(ino: ino, itemID: itemID, sent: sent, answer: item?.tags, state: &state)
            }
            return finishItemUpload(
                ino: ino, itemID: itemID, container: container, generation: generation, epoch: epoch,
                contentSent: contents != nil, placed: true, timeResentMeanwhile: timeResentMeanwhile, result: result,
                state: &state)
        }
    }

    /// Records how the upload of an item ended; returns how its failure is taken (`nil`: nothing is retried).
    private func finishItemUpload(
        ino: UInt64, itemID: ItemID, container: ContainerID, generation: UInt64, epoch: UInt64, contentSent: Bool,
        placed: Bool, timeResentMeanwhile: Bool, result: Result<RemoteItem?, FolioError>, state: inout State
    ) -> UploadFailure? {
        var judged: UploadFailure?
        if case .failure(let error) = result { judged = UploadFailure(error) }
        // An atomic save may have moved the item to another inode while the upload ran.
        let currentIno = state.nodes[ino]?.itemID == itemID ? ino : state.byItemID[itemID]
        guard let ino = currentIno, var node = state.nodes[ino], node.itemID == itemID else {
            // The item was deleted (or replaced) while its upload ran: delete what reached the provider. (Its
            // tombstone, made then, waited for the upload; it now names the version the upload made.) A change
            // without content that landed on another writer's content names that writer's version, which nobody
            // here saw: the delete keeps its base, so the remote refuses it as a conflict and keeps that content.
            if case .success(let item?) = result, var tombstone = state.tombstones[itemID],
               contentSent || !item.changedElsewhere {
                tombstone.remoteVersion = item.version
                tombstone.container = item.container  // the upload may have moved it to another container
                var batch = StoreBatch()
                batch.tombstoneUpserts.append(tombstone)
                if (try? persist(batch, state: &state)) != nil { state.tombstones[itemID] = tombstone }
            } else if case .success(let item?) = result, state.tombstones[itemID] == nil,
                state.byItemID[itemID] == nil {
                let tombstone = Tombstone(
                    itemID: itemID, container: item.container, remoteVersion: item.version,
                    sequence: state.allocateSequence())
                var batch = StoreBatch()
                batch.tombstoneUpserts.append(tombstone)
                if (try? persist(batch, state: &state)) != nil { state.tombstones[itemID] = tombstone }
            }
            return judged
        }
        var uncertain = false
        if case .failure(let error) = result {
            // (Out of space may strike once the content is in place, when it is made durable.)
            if case .noSpace = error { uncertain = true } else { uncertain = error.isRetryable }
        }
        state.sync.uploadOutcomeRecorded(itemID, ino: ino, uncertain: uncertain)
        switch result {
        case .success(let item):
            if let item {
                // A change without content to a file another writer changed meanwhile: the base is kept, so the
                // next enumeration brings that writer's content as a remote change (never taken as ours).
                if contentSent || !item.changedElsewhere { node.remoteVersion = item.version }
                node.remoteContainer = item.container
            }
            // (A folder's or symlink's create sends no content generation: it stays as it is.)
            switch node.state {
            case .dirty, .uploading:
                guard contentSent else { break }
                do {
                    try node.apply(.uploadFinished(generation: generation))
                } catch {
                    logger.error("\(node.name) stays \(node.state.name) after its upload: \(error)")
                }
            default: break
            }
            if !placed {
                node.metadataDirty = true  // the item is elsewhere on the remote: a move follows
            } else if (state.metadataEpochs[ino] ?? 0) == epoch {
                node.metadataDirty = false
            }
            // Every upload of a folder sends its time; unless asked for again meanwhile, it went.
            if !timeResentMeanwhile { node.timeDirty = false }
            // The remote gave the folder its own time for this (not for a folder's own attribute change).
            if placed && (contentSent || node.kind != .directory) { resendFolderTime(node.parent, state: &state) }
            perform(state.sync.changeLanded(itemID), state: &state)
        case .failure(.conflict(let reason)):
            logger.warning("upload of \(node.name) conflicts with a remote change: \(reason)")
            do {
                try node.apply(.conflictDetected)
                perform(state.sync.conflictFound(node.itemID), state: &state)
            } catch {
                // No local version to keep beside the remote's (a metadata-only change, a folder's): the change
                // is held for the user (`folio status` says so; `folio retry`, a new change or a mount sends it).
                logger.error("\(node.name) cannot be conflicted (\(error)): its change waits for the user")
                state.sync.holdForUser(
                    ino, sequence: node.dirtySequence,
                    reason: "the remote changed it meanwhile: \(reason) (needs you: run `folio retry PATH`)")
            }
        case .failure(.notFound) where node.waitsOnlyForTime && !folderKeepsLocalChanges(ino, state: state):
            // Deleted on the remote while only its time waited here: the delete is taken (the poller takes
            // the item again, finds it gone and removes it, with what it held: the change set that said so may
            // have come by while the time was on its way).
            logger.info("\(node.name) was deleted on the remote: its time is not sent again")
            node.timeDirty = false
            perform(state.sync.takeAgain(node.itemID, in: node.remoteContainer ?? node.container), state: &state)
        case .failure(.notFound) where node.kind == .file && !node.state.hasLocalContent:
            // Deleted on the remote while only its name or attributes changed here, its content never here: there
            // is nothing of it to keep, so the delete is taken (the poller takes the item again, finds it gone and
            // removes it). Creating it again would make an empty document of it.
            logger.info("\(node.name) was deleted on the remote; only its name or attributes changed here")
            node.metadataDirty = false
            node.timeDirty = false
            perform(state.sync.takeAgain(node.itemID, in: node.remoteContainer ?? node.container), state: &state)
        case .failure(.notFound) where node.remoteVersion != nil && !node.kind.isLocalOnly:
            // Deleted on the remote while changed here: the local version is kept and created again.
            logger.warning("\(node.name) was deleted on the remote but changed here: it is created again")
            do {
                try node.prepareToBeCreatedAgain(sequence: state.allocateSequence())
            } catch {
                logger.error("\(node.name) is not created again: \(error)")  // (a commit is allowed in every state)
            }
        case .failure(let error):
            // A failure that can clear waits and is retried (with the uploader's backoff); only one that needs
            // the user makes the item `failed`. A name taken on the remote while other work is still on its way
            // (the delete of the item that had the name, or its rename away, may be in flight beside this call:
            // after a crash both are sent again at once) is a passing clash: retried, and only a clash that stays
            // once nothing else is pending needs the user.
            let othersPending = state.tombstones.count > 0 || !state.sync.deletesInFlight.isEmpty
                || !state.sync.uploadsInFlight.isEmpty
            let failure: UploadFailure = if case .exists = error, othersPending {
                .willClear(remedy: "retried once the item that has the name on the remote is deleted or moved")
            } else {
                UploadFailure(error)
            }
            judged = failure
            if case .uploading(let current) = node.state {
                do {
                    try node.apply(.uploadFailed(
                        generation: current, reason: UploadFailure.failedReason(error), retryable: !failure.needsUser))
                } catch {
                    logger.error("\(node.name) stays \(node.state.name): \(error)")  // (uploading allows it)
                }
            }
            if case .failed = node.state {
            } else if failure.needsUser {
                // A folder's create or a metadata-only change has no content state to fail: it is held back until
                // the user retries it or changes it again (unless it changed already while the upload ran).
                if (state.metadataEpochs[ino] ?? 0) == epoch && node.generation == generation {
                    state.sync.holdForUser(ino, sequence: node.dirtySequence, reason: UploadFailure.failedReason(error))
                }
            } else {
                state.sync.uploadWaits(ino, reason: "\(error) (\(failure.remedy))")
            }
        }
        // Written with the next group write: lost in a crash, the upload is simply made again.
        saveDeferred(node, state: &state)
        return judged
    }

    // MARK: Remote items

    /// The current upload epoch: take it before asking the provider and pass it to the merge
    /// (``applyEnumeration(of:items:epoch:)``, ``applyFolderListing(_:items:epoch:)``,
    /// ``applyChanges(_:in:epoch:)``).
    public func remoteEpoch() -> UInt64 {
        state.withLock { $0.sync.remoteEpoch }
    }

    /// Records what the remote cannot do (from the services, once it answered), for ``status()``.
    public func recordProviderLimitations(_ limitations: [String]) {
        state.withLock { $0.providerLimitations = limitations }
    }

    /// Marks the provider reachable or not (from the services).
    public func recordProviderReachability(online: Bool, error: String?) {
        state.withLock {
            $0.providerOnline = online
            $0.lastProviderError = error
        }
    }

    /// Counts for `folio status`.
    public func status() -> FileSystemStatus {
        state.withLock { state in
            try? loadAllStored(state: &state)  // (counts of every item; a store that cannot be read: of memory's)
            var failures: [String] = []
            for ino in state.nodes.failed.prefix(20) {
                guard let node = state.nodes[ino], case .failed(let reason) = node.state else { continue }
                failures.append("\(state.path(of: node.ino) ?? node.name): \(reason)")
            }
            for (ino, held) in state.sync.uploadsNeedingUser.sorted(by: { $0.key < $1.key }) where failures.count < 20 {
                guard let node = state.nodes[ino], state.isHeldForUser(node) else { continue }
                failures.append("\(state.path(of: node.ino) ?? node.name): \(held.reason)")
            }
            var waiting: [String] = []
            for (ino, reason) in state.sync.uploadWaits.sorted(by: { $0.key < $1.key }) where waiting.count < 20 {
                guard let node = state.nodes[ino], node.hasPendingUpload else { continue }
                waiting.append("\(state.path(of: node.ino) ?? node.name): \(reason)")
            }
            // Placeholders some of whose bytes are here count as `partial`, by the rule `user.folio.state` shows
            // (``displayedState(of:state:)``): kept bytes, or bytes of a download that fetches nothing now.
            var states = state.nodes.stateCounts
            let partial = Set(state.partials.keys).union(state.progress.keys).filter { ino in
                state.nodes[ino].map { displayedState(of: $0, state: state) == "partial" } ?? false
            }.count
            if partial > 0 {
                states["partial"] = partial
                states["placeholder", default: 0] -= partial
                if states["placeholder"] == 0 { states["placeholder"] = nil }
            }
            var status = FileSystemStatus(
                states: states, pendingUploads: state.tombstones.count + state.nodes.pending.count,
                uploadsInFlight: state.sync.uploadsInFlight.count + state.sync.deletesInFlight.count,
                providerOnline: state.providerOnline, lastProviderError: state.lastProviderError,
                failures: failures.sorted(), waiting: waiting.sorted(), waitingForUser: state.uploadsWaitingForUser)
            (status.foldersListed, status.foldersNotListed) = state.nodes.folderListingCounts
            status.providerLimitations = state.providerLimitations
            status.readFailures = state.readFailures
            return status
        }
    }

    /// The number of uploads (and remote deletes) running now.
    public var uploadsInFlightCount: Int {
        state.withLock { $0.sync.uploadsInFlight.count + $0.sync.deletesInFlight.count }
    }

    /// The number of changes waiting for upload.
    public var pendingUploadCount: Int {
        state.withLock { $0.tombstones.count + $0.nodes.pending.count }
    }
}
