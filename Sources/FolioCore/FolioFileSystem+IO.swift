import Foundation

/// Where the bytes of a read come from: a descriptor and how much of it is valid for this handle.
public struct ReadSource: Sendable {
    /// Descriptor to read (or splice) from.
    public var fd: Int32
    /// Size of the content this handle sees.
    public var size: Int64
    /// When some bytes of the read are not here yet: the download to wait for
    /// (``RangedContent/waitUntilPresent(_:)``) before reading `fd`.
    public var pending: (any RangedContent)? = nil
}

extension FolioFileSystem {
    private enum OpenStep {
        case ready(OpenedFile)
        case materialize
        case waitForWriter
    }

    /// Opens a file. A placeholder is materialized first (the call waits, the worker thread does not); a
    /// writer waits (bounded) while another process holds the item's write session, then fails with `EBUSY`.
    public func open(_ ino: UInt64, flags: Int32, context: RequestContext) async throws(FolioError) -> OpenedFile {
        let deadline = ContinuousClock.now + configuration.writeWaitTimeout
        while true {
            let step = try state.withLock { state throws(FolioError) in
                try openStep(ino, flags: flags, context: context, deadline: deadline, state: &state)
            }
            switch step {
            case .ready(let opened):
                return opened
            case .materialize:
                if processIdentity.isProcess(context.processID, oneOf: configuration.indexers) {
                    let name = processIdentity.name(ofProcess: context.processID) ?? "an indexer"
                    throw .notHere("\(name) (process \(context.processID)) never downloads: inode \(ino) is not here")
                }
                guard let materializer else { throw .offline("no provider connected") }
                let access = flags & O_ACCMODE
                if access == O_RDONLY, let ranged = materializer as? any RangedMaterializing {
                    // A reader does not wait for the content: its reads wait for their bytes.
                    if let partial = try await ranged.openRanged(ino),
                       let opened = try openPartial(ino, partial, context: context) {
                        return opened
                    }
                } else {
                    try await materializer.materialize(ino)
                }
            case .waitForWriter:
                await waitForSessionEnd(ino, until: deadline)
            }
        }
    }

    /// Opens a file at once if that needs no waiting (content here, no other writer); `nil` otherwise, and
    /// the caller goes through ``open(_:flags:context:)``.
    public func tryOpen(_ ino: UInt64, flags: Int32, context: RequestContext) throws(FolioError) -> OpenedFile? {
        let deadline = ContinuousClock.now + configuration.writeWaitTimeout
        let step = try state.withLock { state throws(FolioError) in
            try openStep(ino, flags: flags, context: context, deadline: deadline, state: &state)
        }
        if case .ready(let opened) = step { return opened }
        return nil
    }

    private func openStep(
        _ ino: UInt64, flags: Int32, context: RequestContext, deadline: ContinuousClock.Instant, state: inout State
    ) throws(FolioError) -> OpenStep {
        guard let node = state.node(ino) else { throw .notFound("inode \(ino)") }
        guard node.kind == .file else {
            if node.kind == .directory { throw .isDirectory(node.name) }
            throw .notSupported("\(node.name) cannot be opened through Folio")
        }
        let access = flags & O_ACCMODE
        let writing = access == O_WRONLY || access == O_RDWR
        let truncating = writing && flags & O_TRUNC != 0
        if context.processID != 0 { recordUse(of: node, state: &state) }
        if let session = state.sessions[ino] {
            if session.ownerProcessID == context.processID || !writing {
                if session.ownerProcessID == context.processID {
                    return .ready(try joinSession(ino, flags: flags, context: context, state: &state))
                }
            } else {
                if ContinuousClock.now >= deadline {
                    throw .busy("\(node.name) is being written by process \(session.ownerProcessID)")
                }
                return .waitForWriter
            }
        }
        if !node.state.hasLocalContent && !truncating { return .materialize }
        if writing {
            try startSession(ino, truncate: truncating, context: context, state: &state)
            return .ready(try joinSession(ino, flags: flags, context: context, state: &state))
        }
        guard let file = node.contentFile else { return .materialize }
        let fd = try cache.openForReading(file)
        let handle = state.allocateHandle()
        let policy = admitToPageCache(ino, key: .version(file), state: &state)
        state.handles[handle] = OpenHandle(
            ino: ino, processID: context.processID, readFD: fd, snapshotSize: node.size, sessionID: nil,
            canWrite: false, append: false, isCached: policy != .directIO)
        state.handleCounts[ino, default: 0] += 1
        if policy == .directIO { state.directHandles[ino, default: 0] += 1 }
        return .ready(OpenedFile(handle: handle, cachePolicy: policy, isReadOnly: true))
    }

    /// Opens a reader on the version file `partial` fills, if the node still is a placeholder of that version;
    /// `nil` otherwise (the caller opens again). The handle counts as one of the download's opens either way.
    private func openPartial(
        _ ino: UInt64, _ partial: any RangedContent, context: RequestContext
    ) throws(FolioError) -> OpenedFile? {
        let opened: OpenedFile?
        do {
            opened = try state.withLock { state throws(FolioError) -> OpenedFile? in
                guard let node = state.node(ino) else { throw .notFound("inode \(ino)") }
                guard !node.state.hasLocalContent, node.remoteVersion == partial.version else { return nil }
                let fd = try cache.openForReading(partial.fileName)
                let handle = state.allocateHandle()
                let policy = admitToPageCache(ino, key: .version(partial.fileName), state: &state)
                state.handles[handle] = OpenHandle(
                    ino: ino, processID: context.processID, readFD: fd, snapshotSize: partial.size, sessionID: nil,
                    canWrite: false, append: false, isCached: policy != .directIO, partial: partial)
                state.handleCounts[ino, default: 0] += 1
                if policy == .directIO { state.directHandles[ino, default: 0] += 1 }
                // Not read-only for the kernel: its `close()` is flushed, to see a reader killed by a signal.
                return OpenedFile(handle: handle, cachePolicy: policy, isReadOnly: false)
            }
        } catch {
            partial.handleClosed()
            throw error
        }
        if opened == nil { partial.handleClosed() }
        return opened
    }

    /// Decides how the kernel may cache a new handle with view `key` (see DESIGN.md §3 "The fast path").
    private func admitToPageCache(_ ino: UInt64, key: PageCacheKey, state: inout State) -> CachePolicy {
        var pageCache = state.pageCaches[ino] ?? PageCacheState()
        defer { state.pageCaches[ino] = pageCache }
        if pageCache.activeKey == nil || pageCache.activeKey == key {
            let policy: CachePolicy = pageCache.contentKey == key ? .keepCache : .freshCache
            pageCache.activeKey = key
            pageCache.activeCount += 1
            pageCache.contentKey = key
            return policy
        }
        return .directIO
    }

    private func leavePageCache(_ ino: UInt64, state: inout State) {
        guard var pageCache = state.pageCaches[ino] else { return }
        pageCache.activeCount -= 1
        if pageCache.activeCount <= 0 {
            pageCache.activeCount = 0
            pageCache.activeKey = nil
        }
        state.pageCaches[ino] = pageCache
    }

    private func startSession(_ ino: UInt64, truncate: Bool, context: RequestContext, state: inout State) throws(FolioError) {
        guard let node = state.node(ino) else { throw .notFound("inode \(ino)") }
        // The session starts on a committed version (the current one, or the shared empty version for a
        // truncating open); the first write copies it, so a committed version is never modified.
        let name = truncate ? ContentCache.emptyVersion : (node.contentFile ?? ContentCache.emptyVersion)
        let file = (name: name, fd: try cache.openForReading(name))
        let id = state.allocateHandle()
        state.sessions[ino] = WriteSession(
            id: id, ownerProcessID: context.processID, fd: file.fd, fileName: file.name,
            fileIsCommitted: true, hasUncommittedChanges: truncate && node.size > 0,
            size: truncate ? 0 : node.size, handles: [], retiredFDs: [], explicitModificationTime: nil)
    }

    private func joinSession(
        _ ino: UInt64, flags: Int32, context: RequestContext, state: inout State
    ) throws(FolioError) -> OpenedFile {
        guard var session = state.sessions[ino] else { throw .badHandle("no write session") }
        let access = flags & O_ACCMODE
        let writing = access == O_WRONLY || access == O_RDWR
        if writing && flags & O_TRUNC != 0 && session.size > 0 {
            try makeSessionWritable(&session, truncatingTo: 0)
            guard ftruncate(session.fd, 0) == 0 else { throw .system(.init(rawValue: errno), "truncate") }
            session.size = 0
            session.hasUncommittedChanges = true
        }
        let handle = state.allocateHandle()
        session.handles.insert(handle)
        state.sessions[ino] = session
        let policy = admitToPageCache(ino, key: .session(session.id), state: &state)
        state.handles[handle] = OpenHandle(
            ino: ino, processID: context.processID, readFD: nil, snapshotSize: 0, sessionID: session.id,
            canWrite: writing, append: flags & O_APPEND != 0, isCached: policy != .directIO)
        state.handleCounts[ino, default: 0] += 1
        if policy == .directIO { state.directHandles[ino, default: 0] += 1 }
        return OpenedFile(handle: handle, cachePolicy: policy)
    }

    /// Copies a session's file that was committed, so the committed version is never changed. When the
    /// next change is a truncation to `truncatingTo` 0, a new empty file replaces the copy.
    func makeSessionWritable(_ session: inout WriteSession, truncatingTo: Int64? = nil) throws(FolioError) {
        guard session.fileIsCommitted else { return }
        let copy = truncatingTo == 0 ? try cache.makeFile() : try cache.makeCopy(of: session.fd, size: session.size)
        session.retiredFDs.append(session.fd)
        session.fd = copy.fd
        session.fileName = copy.name
        session.fileIsCommitted = false
    }

    private func waitForSessionEnd(_ ino: UInt64, until deadline: ContinuousClock.Instant) async {
        let waiterID = state.withLock { $0.allocateHandle() }
        let timeout = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            self.resumeWaiter(ino, waiterID)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                guard state.sessions[ino] != nil else { return true }
                state.sessionWaiters[ino, default: [:]][waiterID] = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timeout.cancel()
    }

    private func resumeWaiter(_ ino: UInt64, _ waiterID: UInt64) {
        let continuation = state.withLock { $0.sessionWaiters[ino]?.removeValue(forKey: waiterID) }
        continuation?.resume()
    }

    /// Creates and opens a new file. The empty file exists at once; the content is committed at close. A file
    /// created where a document of the same process was moments ago takes the document over (an editor's save,
    /// see ``SaveTracker``).
    public func createFile(
        parent: UInt64, name: String, permissions: UInt32, flags: Int32, context: RequestContext
    ) throws(FolioError) -> (Attributes, UInt64) {
        let result = try state.withLock { state throws(FolioError) -> (Attributes, UInt64, [ExternalReference]) in
            // The new file's committed content is the shared empty version, and the session starts on it: the
            // first write gives the session a file of its own, so a file created and closed without writing
            // costs no version file at all.
            let fd = try cache.openForReading(ContentCache.emptyVersion)
            let node: Node
            do throws(FolioError) {
                node = try addChild(
                    parent: parent, name: name, kind: .file, permissions: permissions, context: context, state: &state
                ) { (node: inout Node) throws(FolioError) in
                    try node.apply(.committed(generation: 1))
                    node.contentFile = ContentCache.emptyVersion
                    node.generation = 1
                }
            } catch {
                close(fd)
                throw error
            }
            let ino = node.ino
            let moved = takeOver(by: ino, processID: context.processID, state: &state)
            let sessionID = state.allocateHandle()
            state.sessions[ino] = WriteSession(
                id: sessionID, ownerProcessID: context.processID, fd: fd, fileName: ContentCache.emptyVersion,
                fileIsCommitted: true, hasUncommittedChanges: false, size: 0, handles: [], retiredFDs: [],
                explicitModificationTime: nil)
            let opened = try joinSession(ino, flags: flags, context: context, state: &state)
            return (attributes(of: state.nodes[ino] ?? node, state: state), opened.handle, moved)
        }
        for reference in result.2 { invalidator?.invalidateEntry(parent: reference.parent, name: reference.name) }
        announce([.entry(parent, name), .inode(parent)])
        notifyUploader()
        return (result.0, result.1)
    }

    /// The cache policy a handle was opened with.
    public func cachePolicy(of handle: UInt64) -> CachePolicy {
        state.withLock { state in
            guard let open = state.handles[handle] else { return .directIO }
            return open.isCached ? .keepCache : .directIO
        }
    }

    /// How far ahead of a sequential reader the version file is read into memory.
    static let readAheadWindow: Int64 = 8 << 20

    /// Where to read a handle's bytes from, for a read of `size` bytes at `offset`.
    ///
    /// A read that continues where the handle's last one ended is part of a sequential scan: the version
    /// file is then asked to be read ahead (a window beyond this read), so the disk works while the kernel
    /// hands the previous chunk to the reader — the two readaheads (the FUSE file's and the version file's)
    /// overlap instead of taking turns.
    public func readSource(_ handle: UInt64, offset: Int64 = 0, size: Int = 0) throws(FolioError) -> ReadSource {
        var (source, prefetch) = try state.withLock { state throws(FolioError) -> (ReadSource, Range<Int64>?) in
            guard var open = state.handles[handle] else { throw .badHandle("file handle \(handle)") }
            let source: ReadSource
            if let fd = open.readFD {
                source = ReadSource(fd: fd, size: open.snapshotSize, pending: open.partial)
            } else {
                guard let session = state.sessions[open.ino] else { throw .badHandle("write session gone") }
                source = ReadSource(fd: session.fd, size: session.size)
            }
            let end = min(offset + Int64(size), source.size)
            var prefetch: Range<Int64>?
            if size > 0, offset > 0, offset == open.sequentialEnd, end < source.size,
               end + Self.readAheadWindow / 2 > open.prefetchedUntil {
                let until = min(end + Self.readAheadWindow, source.size)
                let from = max(end, open.prefetchedUntil)
                if from < until { prefetch = from..<until }
                open.prefetchedUntil = until
            } else if offset != open.sequentialEnd {
                open.prefetchedUntil = 0
            }
            if size > 0 {
                open.sequentialEnd = end
                state.handles[handle] = open
            }
            return (source, prefetch)
        }
        if let partial = source.pending {
            // A reader of a download: the bytes it reads may not be here yet.
            let wanted = offset..<max(offset, min(offset + Int64(size), source.size))
            if partial.read(wanted) { source.pending = nil } else { prefetch = nil }
        }
        if let prefetch, !prefetch.isEmpty { cache.prefetch(source.fd, prefetch) }
        return source
    }

    /// Writes into the handle's write session; returns the number of bytes written. The bytes go to the disk
    /// outside the state lock, under the session's gate (``SessionGate``): a slow disk holds up this session's
    /// commit, never another request of this or another item.
    public func write(_ handle: UInt64, offset: Int64, bytes: UnsafeRawBufferPointer) throws(FolioError) -> Int {
        while true {
            let gate = try state.withLock { state throws(FolioError) -> SessionGate in
                try writableSession(of: handle, state: state).session.gate
            }
            try makeSessionFileWritable(handle, gate: gate)
            let written = try gate.shared { () throws(FolioError) -> Int? in
                try writeUnderGate(handle, offset: offset, bytes: bytes)
            }
            // `nil`: a commit came between the copy and the write; copy again.
            if let written { return written }
        }
    }

    /// The handle's open state and its write session; `.badHandle` if it has none it may write through.
    private func writableSession(
        of handle: UInt64, state: borrowing State
    ) throws(FolioError) -> (open: OpenHandle, session: WriteSession) {
        guard let open = state.handles[handle] else { throw .badHandle("file handle \(handle)") }
        guard open.canWrite, let session = state.sessions[open.ino], session.id == open.sessionID else {
            throw .badHandle("file handle \(handle) is not open for writing")
        }
        return (open, session)
    }

    /// With `gate` held shared: writes `bytes`, or returns `nil` if the session's file is a committed version.
    private func writeUnderGate(
        _ handle: UInt64, offset: Int64, bytes: UnsafeRawBufferPointer
    ) throws(FolioError) -> Int? {
        let target = try state.withLock { state throws(FolioError) -> (fd: Int32, position: Int64, ino: UInt64)? in
            var (open, session) = try writableSession(of: handle, state: state)
            guard !session.fileIsCommitted else { return nil }
            let position = open.append ? session.size : offset
            // Appends are placed now, so two appends of the session never take the same place.
            session.size = max(session.size, position + Int64(bytes.count))
            session.hasUncommittedChanges = true
            state.sessions[open.ino] = session
            return (session.fd, position, open.ino)
        }
        guard let target else { return nil }
        configuration.beforeContentWrite?()
        var written = 0
        var failure: FolioError?
        while written < bytes.count {
            let count = pwrite(
                target.fd, bytes.baseAddress! + written, bytes.count - written, off_t(target.position) + written)
            if count < 0 {
                if errno == EINTR { continue }
                failure = FolioError.system(.init(rawValue: errno), "write")
                break
            }
            written += count
        }
        if written < bytes.count {
            // What was not written does not count: the size is the file's own, as it is now.
            state.withLock { state in
                guard var session = state.sessions[target.ino], session.fd == target.fd else { return }
                var info = stat()
                if fstat(target.fd, &info) == 0 { session.size = Int64(info.st_size) }
                state.sessions[target.ino] = session
            }
        }
        if let failure { throw failure }
        return written
    }

    /// Copies the session's file if it is a committed version (which is never changed), under `gate` held
    /// exclusive and outside the state lock.
    private func makeSessionFileWritable(_ handle: UInt64, gate: SessionGate) throws(FolioError) {
        let needed = try state.withLock { state throws(FolioError) -> Bool in
            try writableSession(of: handle, state: state).session.fileIsCommitted
        }
        guard needed else { return }
        try gate.exclusive { () throws(FolioError) in
            let source = try state.withLock { state throws(FolioError) -> (fd: Int32, size: Int64, id: UInt64)? in
                let (_, session) = try writableSession(of: handle, state: state)
                return session.fileIsCommitted ? (session.fd, session.size, session.id) : nil
            }
            guard let source else { return }
            let copy = try cache.makeCopy(of: source.fd, size: source.size)
            let installed = state.withLock { state -> Bool in
                guard let (open, found) = try? writableSession(of: handle, state: state), found.id == source.id,
                    found.fileIsCommitted, found.fd == source.fd
                else { return false }
                var session = found
                session.retiredFDs.append(session.fd)
                session.fd = copy.fd
                session.fileName = copy.name
                session.fileIsCommitted = false
                state.sessions[open.ino] = session
                return true
            }
            if !installed {
                // Someone else made the file writable meanwhile (a truncation): this copy is not needed.
                close(copy.fd)
                cache.remove(copy.name)
            }
        }
    }

    /// Called at each `close()` of a descriptor (synchronously, unlike the release that follows later):
    /// commits the session's changes when the process closing it is the one that opened it. A forked child
    /// closing its inherited copy at `exec` does not commit the parent's half-written file; the last release
    /// commits in any case.
    public func flush(_ handle: UInt64, processID: Int32) throws(FolioError) {
        if let partial = state.withLock({ $0.handles[handle]?.partial }),
           ProcessIdentity.isBeingKilledBySignal(processID) {
            partial.readerInterrupted()
        }
        let ino: UInt64? = state.withLock { state in
            guard let open = state.handles[handle], let sessionID = open.sessionID,
                  open.processID == processID || processID == 0,
                  let session = state.sessions[open.ino], session.id == sessionID,
                  session.hasUncommittedChanges else { return nil }
            return open.ino
        }
        if let ino { try commit(ino, durable: false) }
    }

    /// `fsync`: commits the handle's write session now, durably; with nothing new to commit, makes what was
    /// committed and changed before durable (the handle's content and every staged or written metadata change).
    public func synchronize(_ handle: UInt64) throws(FolioError) {
        let target: (ino: UInt64, fd: Int32, hasChanges: Bool)? = state.withLock { state in
            guard let open = state.handles[handle] else { return nil }
            if let sessionID = open.sessionID, let session = state.sessions[open.ino], session.id == sessionID {
                return (open.ino, session.fd, session.hasUncommittedChanges)
            }
            return open.readFD.map { (open.ino, $0, false) }
        }
        guard let target else { return }
        if target.hasChanges {
            try commit(target.ino, durable: true)
        } else {
            try cache.synchronize(target.fd)
            try synchronizeMetadata()
        }
        // An upload that failed after `close()` returned is reported here, as a local write error would be.
        if let node = node(target.ino), case .failed(let reason) = node.state {
            throw .io("the upload of \(node.name) failed: \(reason)")
        }
    }

    /// Closes a handle; the last handle of a write session commits it.
    public func release(_ handle: UInt64) throws(FolioError) {
        let commitNeeded: UInt64? = state.withLock { state in
            guard let open = state.handles[handle], let sessionID = open.sessionID,
                  let session = state.sessions[open.ino], session.id == sessionID,
                  session.handles == [handle], session.hasUncommittedChanges else { return nil }
            return open.ino
        }
        var commitError: FolioError?
        var convergedIno: UInt64?
        if let commitNeeded {
            do { try commit(commitNeeded, durable: false) } catch { commitError = error }
        }
        var partial: (any RangedContent)?
        let (waiters, removeFile, endedSession) = state.withLock {
            state -> ([CheckedContinuation<Void, Never>], String?, Bool) in
            guard let open = state.handles[handle] else { return ([], nil, false) }
            partial = open.partial
            let ino = open.ino
            let wasDivergent = state.hasDivergentViews(ino)
            state.handles[handle] = nil
            state.handleCounts[ino, default: 1] -= 1
            if state.handleCounts[ino] == 0 { state.handleCounts[ino] = nil }
            if open.isCached {
                leavePageCache(ino, state: &state)
            } else {
                state.directHandles[ino, default: 1] -= 1
                if state.directHandles[ino] == 0 { state.directHandles[ino] = nil }
            }
            if let fd = open.readFD { close(fd) }
            var waiters: [CheckedContinuation<Void, Never>] = []
            var removeFile: String?
            var endedSession = false
            if let sessionID = open.sessionID, var session = state.sessions[ino], session.id == sessionID {
                session.handles.remove(handle)
                if session.handles.isEmpty {
                    state.sessions[ino] = nil
                    close(session.fd)
                    session.retiredFDs.forEach { close($0) }
                    let current = state.node(ino)?.contentFile
                    if session.fileName != current { removeFile = session.fileName }
                    waiters = Array((state.sessionWaiters.removeValue(forKey: ino) ?? [:]).values)
                    endedSession = true
                } else {
                    state.sessions[ino] = session
                }
            }
            if wasDivergent && !state.hasDivergentViews(ino) { convergedIno = ino }
            if !state.isReferenced(ino), let orphan = state.orphans.removeValue(forKey: ino) {
                if let file = orphan.contentFile, file != removeFile { discardContent(file, state: &state) }
                state.pageCaches[ino] = nil
            }
            return (waiters, removeFile, endedSession)
        }
        if let removeFile { cache.remove(removeFile) }
        partial?.handleClosed()
        if endedSession { notifyUploader() }
        if let convergedIno { invalidator?.invalidateInode(convergedIno) }
        waiters.forEach { $0.resume() }
        if let commitError { throw commitError }
    }

    /// Makes the session's content of `ino` a new committed version: atomic (a new immutable version file
    /// and one metadata transaction), state `dirty`, kernel caches invalidated, uploader woken.
    ///
    /// Every commit survives a crash or `kill -9` of the daemon (the content is written and the metadata
    /// transaction committed before the caller is answered). A `durable` commit (at `fsync`) also survives a
    /// power loss: the version file is `fdatasync`ed and the transaction synced — as `close()` and `fsync()`
    /// differ on any POSIX filesystem.
    func commit(_ ino: UInt64, durable: Bool) throws(FolioError) {
        // No write of the session runs while it becomes a version (the gate, then the state lock: see SessionGate).
        guard let gate = state.withLock({ $0.sessions[ino]?.gate }) else { return }
        try gate.exclusive { () throws(FolioError) in try commitUnderGate(ino, durable: durable) }
    }

    /// ``commit(_:durable:)`` with the session's gate held exclusive.
    private func commitUnderGate(_ ino: UInt64, durable: Bool) throws(FolioError) {
        guard let fd = state.withLock({ $0.sessions[ino]?.fd }) else { return }
        if durable { try cache.synchronize(fd) }
        let (committed, ticket) = try state.withLock { state throws(FolioError) -> (Bool, UInt64?) in
            guard var session = state.sessions[ino], session.hasUncommittedChanges else { return (false, nil) }
            if durable, session.fd != fd { try cache.synchronize(session.fd) }
            let isOrphan = state.nodes[ino] == nil
            guard var node = state.node(ino) else { return (false, nil) }
            let before = node
            let previous = node.contentFile
            let now = Timestamp.now()
            node.contentFile = session.fileName
            node.size = session.size
            node.generation += 1
            try node.apply(.committed(generation: node.generation))
            node.modificationTime = session.explicitModificationTime ?? now
            node.changeTime = now
            node.dirtySequence = state.allocateSequence()
            // The replaced version file goes once the store no longer refers to it.
            let replaced = previous.flatMap { $0 != session.fileName ? [$0] : nil } ?? []
            var ticket: UInt64?
            if !isOrphan {
                var batch = StoreBatch()
                batch.upserts.append(node)
                let commit = QueuedCommit(
                    ino: ino, before: before, after: node, sessionID: session.id,
                    sessionFileWasCommitted: session.fileIsCommitted, replaced: replaced)
                ticket = try enqueuePersist(batch, durable: durable, commit: commit, state: &state)
                state.nodes[ino] = node
                recordUse(of: node, state: &state)
            } else {
                state.orphans[ino] = node
                for file in replaced { discardContent(file, state: &state) }
            }
            session.fileIsCommitted = true
            session.hasUncommittedChanges = false
            state.sessions[ino] = session
            if var pageCache = state.pageCaches[ino] {
                pageCache.contentKey = nil
                state.pageCaches[ino] = pageCache
            }
            return (!isOrphan, ticket)
        }
        // The transaction (and its `fsync` if durable) runs outside the state lock: other requests go on meanwhile.
        // If it fails, the commit is undone before this returns (see ``undoCommit(_:state:)``).
        var storeError: FolioError?
        do { try writeStore(through: ticket) } catch { storeError = error }
        if committed {
            invalidator?.invalidateInode(ino)
            notifyUploader()
        }
        if let storeError { throw storeError }
    }

    /// Undoes `commit`, whose queued store transaction could not be written (under the state lock, while the
    /// committing thread still holds the session's gate): the item gets back the version, size, state and times it
    /// had, and the session its uncommitted changes, exactly as if the commit had failed under the lock. So the
    /// commit fails, the last close tries it again, and if the store still fails, the session's file is dropped as
    /// on any failed commit (with a full disk, that is what frees the space). Returns `false`, leaving the commit
    /// made, if the item or the session changed since in a way the undo cannot restore.
    func undoCommit(_ commit: QueuedCommit, state: inout State) -> Bool {
        let isOrphan = state.nodes[commit.ino] == nil
        guard let node = state.node(commit.ino), node.contentFile == commit.after.contentFile,
              node.generation == commit.after.generation, node.state == commit.after.state,
              node.remoteVersion == commit.before.remoteVersion,
              var session = state.sessions[commit.ino], session.id == commit.sessionID,
              session.fileName == commit.after.contentFile, !session.hasUncommittedChanges
        else { return false }
        var restored = node.withContent(of: commit.before, undoing: commit.after)
        if case .uploading(let generation) = restored.state, !state.sync.isInFlight(restored.itemID) {
            // The upload it was in ended meanwhile without landing (the remote version is the same): again.
            do {
                try restored.apply(.uploadFailed(generation: generation, reason: "store failure", retryable: true))
            } catch {
                return false
            }
        }
        if isOrphan { state.orphans[commit.ino] = restored } else { state.nodes[commit.ino] = restored }
        session.fileIsCommitted = commit.sessionFileWasCommitted
        session.hasUncommittedChanges = true
        state.sessions[commit.ino] = session
        logger.warning("the commit of \(node.name) could not be stored; it is undone")
        return true
    }

    /// Changes attributes. A size change goes through the item's write session (or a short one of its own).
    public func setAttributes(
        _ ino: UInt64, _ changes: AttributeChanges, handle: UInt64?, context: RequestContext
    ) async throws(FolioError) -> Attributes {
        if let size = changes.size {
            try await truncate(ino, to: size, handle: handle, context: context)
        }
        var rest = changes
        rest.size = nil
        return try setAttributesNow(ino, rest, handle: handle)
    }

    /// Changes attributes other than the size, at once.
    public func setAttributesNow(
        _ ino: UInt64, _ changes: AttributeChanges, handle: UInt64?
    ) throws(FolioError) -> Attributes {
        precondition(changes.size == nil, "size changes go through setAttributes")
        try refuseVirtual(ino)
        let result = try state.withLock { state throws(FolioError) -> Attributes in
            guard var node = state.node(ino) else { throw .notFound("inode \(ino)") }
            let now = Timestamp.now()
            var metadataChanged = false
            if let permissions = changes.permissions, permissions & 0o7777 != node.mode {
                node.mode = permissions & 0o7777
                metadataChanged = true
            }
            if let uid = changes.uid { node.uid = uid }
            if let gid = changes.gid { node.gid = gid }
            if let atime = changes.accessTime { node.accessTime = atime }
            if let mtime = changes.modificationTime {
                node.modificationTime = mtime
                metadataChanged = true
                if var session = state.sessions[ino] {
                    session.explicitModificationTime = mtime
                    state.sessions[ino] = session
                }
            }
            node.changeTime = now
            if metadataChanged && !node.kind.isLocalOnly && !node.itemID.isContainerRoot {
                node.metadataDirty = true
                node.dirtySequence = state.allocateSequence()
                state.metadataEpochs[ino, default: 0] += 1
            }
            if state.nodes[ino] != nil {
                state.nodes[ino] = node
                deferPersistence(ino, state: &state)
            } else {
                state.orphans[ino] = node
            }
            return attributes(of: node, state: state, handle: handle)
        }
        announce([.inode(ino)])
        notifyUploader()
        return result
    }

    private func truncate(
        _ ino: UInt64, to size: Int64, handle: UInt64?, context: RequestContext
    ) async throws(FolioError) {
        guard size >= 0 else { throw .invalidArgument("negative size") }
        var ownHandle: UInt64?
        let usable: Bool = state.withLock { state in
            guard let handle, let open = state.handles[handle], open.canWrite else { return false }
            return state.sessions[ino]?.id == open.sessionID
        }
        if !usable {
            let opened = try await open(ino, flags: size == 0 ? O_WRONLY | O_TRUNC : O_WRONLY, context: context)
            ownHandle = opened.handle
        }
        let writer = usable ? handle! : ownHandle!
        do {
            try state.withLock { state throws(FolioError) in
                guard let open = state.handles[writer], var session = state.sessions[open.ino] else {
                    throw .badHandle("write session gone")
                }
                if session.size != size {
                    try makeSessionWritable(&session, truncatingTo: size)
                    guard ftruncate(session.fd, off_t(size)) == 0 else {
                        // EFBIG past the largest file the cache holds; the session keeps its own file.
                        let error = FolioError.system(.init(rawValue: errno), "truncate to \(size) bytes")
                        state.sessions[open.ino] = session
                        throw error
                    }
                    session.size = size
                    session.hasUncommittedChanges = true
                }
                state.sessions[open.ino] = session
            }
        } catch {
            if let ownHandle { try? release(ownHandle) }
            throw error
        }
        if let ownHandle { try release(ownHandle) }
    }
}
