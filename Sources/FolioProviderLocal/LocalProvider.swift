import FolioCore
import Synchronization
import SystemPackage

/// The embedded default backend: a directory on this machine plays the remote.
///
/// Layout of the remote directory `DIR` (made by ``initialize(at:)``):
/// - each top-level directory is a container named by its id (`DIR/com.folio.drive/`, `DIR/com.example.notes/`);
///   hidden entries (starting with `.`) are not containers;
/// - `DIR/.folio-remote.json` holds container display names and visibility (a directory without an entry is a
///   public container named by its id);
/// - `DIR/.folio/` holds the provider's own state (simulation override, symlink ids, uploads being staged).
///
/// An adopted folder of documents (``adopt(at:)``, `RemoteLayout+Adopted.swift`) is the Drive container itself:
/// its manifest and app containers are in `DIR/.folio/`, and what the provider knows of an item is in the id map
/// there (``ItemIDMap``), never in an attribute of the user's items.
///
/// Items keep their id in the `user.folio` xattr (``StoredAttributes``), so ids survive renames and moves, also
/// across containers and also when made by hand on the remote directory. Symlinks, which cannot carry `user.`
/// xattrs on Linux, are identified by device and inode in `DIR/.folio/symlink-ids.json`. A file's version is
/// `"<rev>-<mtime ns>-<size>"` where rev (kept in the same xattr) goes up with every content change made
/// through the provider, so even a change that keeps size and mtime gets a new version.
///
/// Content is uploaded into a new file of `DIR/.folio/staging/` (unnamed where the filesystem allows it:
/// ``StagingFolder``) and put into place in one step, so nobody ever sees a partial file;
/// the content is on disk before it is placed and the new name before the answer, both made durable together
/// with the other uploads in flight (``DiskFlushGroup``);
/// fetches copy from an open descriptor and fail with `.conflict` if the file changed meanwhile. Mutations
/// are serialized by a lock shared by all providers of this process on the same directory (never held across
/// an `await`) and by an exclusive `flock` of `DIR/.folio/lock` (``RemoteLock``), so each check-then-act is
/// atomic for every Folio process on the remote (two mounts are two devices); people changing the directory
/// by hand are noticed, not locked out.
public final class LocalProvider: Provider {
    /// The remote directory.
    public let root: FilePath
    /// The identity of the remote (in its manifest): a folder without it, or with another, is not this remote.
    public var remoteID: String { identity.remoteID }
    /// Where things live.
    let layout: RemoteLayout
    /// The tree and its indexes, behind the lock shared by the providers of this process on this remote.
    let tree: SharedRemoteTree
    /// The network simulation.
    let gate: SimulationGate
    /// Recognizes the remote folder: missing or replaced, the provider is offline.
    let identity: RemoteIdentity
    /// Makes uploads durable together (one `syncfs` for all uploads in flight).
    let diskFlush: DiskFlushGroup
    /// Makes the files uploads are copied into.
    let staging: StagingFolder
    /// The inotify watcher, started by the first ``changeNotifications()`` or ``changes(in:since:)``: what it
    /// saw change is listed again instead of sweeping folders that did not (``RemoteTree/sweepFoldersPerCall``).
    /// It watches the folders the provider lists (the tree has it watch each one before reading it).
    let watcher = Mutex<RemoteWatcher?>(nil)
    /// Which items have a description (a batch of look-ups looks at each spread folder once).
    let descriptionFiles = SpreadFolderIndex(keeping: ".json")
    /// The simulated link's two directions: every fetch shares the one, every upload the other.
    let downlink = SimulatedLink()
    let uplink = SimulatedLink()
    /// Whether ``changes(in:since:)`` starts the watcher (false: changes by hand are found by the sweep alone,
    /// as where inotify is not available; for tests).
    let watchesForChanges = Atomic<Bool>(true)
    /// Set by ``stopWatchingForGood()``: no watcher is started again.
    private let closed = Atomic<Bool>(false)
    /// At most this many folders watched (for tests of a remote with more folders than inotify watches).
    let watchLimit = Atomic<Int>(.max)

    /// A provider over the remote at `root`, which must have been made a remote by ``initialize(at:)``.
    /// `simulation` applies until a run-time override file exists (see ``NetworkSimulation``).
    public convenience init(root: FilePath, simulation: NetworkSimulation = .none) throws {
        try self.init(root: root, simulation: simulation, unnamedStagedFiles: true)
    }

    /// A provider over the remote at `root`; `unnamedStagedFiles: false` stages every upload under a name, as on
    /// a filesystem without unnamed files (tests of that path).
    init(root: FilePath, simulation: NetworkSimulation, unnamedStagedFiles: Bool) throws {
        let layout = RemoteLayout.existing(at: root)
        identity = RemoteIdentity(layout: layout, remoteID: try Self.establishIdentity(of: layout))
        try SystemCalls.makeDirectories(layout.staging)
        self.root = root
        self.layout = layout
        tree = try SharedRemoteTree.forRemote(at: layout)
        gate = SimulationGate(configured: simulation, overrideFile: layout.simulationOverride)
        diskFlush = try DiskFlushGroup(root: root)
        staging = StagingFolder(layout.staging, unnamedFiles: unnamedStagedFiles)
        staging.removeAbandonedUploads()
    }

    /// Push: yields soon after anything changed in the folders of the remote this process listed (inotify on
    /// each), or `nil` where inotify is not available. One stream per watcher: it ends when the watcher is
    /// replaced (the remote's folder went away), and the caller asks again; call ``stopWatchingForGood()`` when
    /// done. The watcher also remembers which folders changed: ``changes(in:since:)`` lists those again.
    public func changeNotifications() -> AsyncStream<Void>? {
        startWatching()?.stream
    }

    /// The watcher, started now if it was not; `nil` where inotify is not available or after
    /// ``stopWatchingForGood()``.
    @discardableResult
    func startWatching() -> RemoteWatcher? {
        watcher.withLock { watcher in
            if watcher == nil, !closed.load(ordering: .relaxed) {
                watcher = RemoteWatcher(
                    root: root, alsoWatching: layout.isAdopted ? [layout.adoptedContainers] : [],
                    watchLimit: watchLimit.load(ordering: .relaxed))
                // It watches the folders listed so far, and each folder listed from now on.
                if let started = watcher { tree.withoutRemoteLock { $0.register(started) } }
            }
            return watcher
        }
    }

    /// Stops the push notifications for good (at shutdown: a call still running starts no new watcher).
    public func stopWatchingForGood() {
        closed.store(true, ordering: .relaxed)
        stopWatching()
    }

    /// Stops the push notifications (a later ``changes(in:since:)`` starts a new watcher).
    public func stopWatching() {
        watcher.withLock { watcher in
            watcher?.stop()
            watcher = nil
        }
    }

    /// The watcher for ``changes(in:since:)``: started if it was not, and replaced by a new one if it lost the
    /// remote's folder (unmounted or deleted); `nil` without inotify or when ``watchesForChanges`` is off.
    func watcherForChanges() -> RemoteWatcher? {
        guard watchesForChanges.load(ordering: .relaxed) else { return watcher.withLock { $0 } }
        if watcher.withLock({ $0.map { !$0.seesTheRemote } ?? false }) { stopWatching() }
        return startWatching()
    }

    deinit {
        watcher.withLock { $0?.stop() }
    }

    /// Lists the containers: one per top-level directory, described by the manifest.
    public func listContainers() async throws -> [Container] {
        _ = try await admit("list containers")
        return try Self.containers(of: layout)
    }

    /// Every item of a container, recursively (metadata only), and the anchor after it. Objects without ids get
    /// them now. Costs the whole container: for tests and tools; the sync engine lists folders one at a time.
    public func enumerateItems(in container: ContainerID) async throws -> (items: [RemoteItem], anchor: SyncAnchor) {
        return try await recognizing("enumerate \(container)") {
            _ = try await admit("enumerate \(container)")
            let (items, position) = try withTree("enumerate \(container)") { tree in
                let items = try tree.scan(container)
                try tree.flushJournal()
                return (items, try tree.journal(for: container).position)
            }
            try identity.check("enumerate \(container)")  // still this remote when the walk ended
            return (items, JournalAnchor(remoteID: remoteID, position: position).anchor)
        }
    }

    /// Changes an item's content and/or metadata. Content is replaced only if the remote is still at
    /// `baseVersion` (otherwise `.conflict`); metadata changes alone never conflict.
    public func modifyItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?
    ) async throws -> RemoteItem {
        try await recognizing("modify \(id)") {
            try await modify(id, in: container, baseVersion: baseVersion, changes: changes, contents: contents)
        }
    }

    /// ``modifyItem(_:in:baseVersion:changes:contents:)`` once the remote folder is recognized.
    private func modify(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?
    ) async throws -> RemoteItem {
        let simulation = try await admit("modify \(id)", writes: true)
        if let name = changes.name { try ItemName.validate(name) }
        // New content is flushed with the other uploads in progress, unless it is big.
        let flushesTogether = contents != nil && Self.isSmall(contents)
        if flushesTogether { diskFlush.uploadStarted() }
        defer { if flushesTogether { diskFlush.uploadEnded() } }
        var staged: StagedUpload?
        // Not renamed into place when the remote already had this content (a retry), nor on failure.
        var renamed = false
        defer { staged?.discard(placed: renamed) }
        if let contents {
            staged = try await stage(contents, simulation: simulation, what: "upload of \(id)")
            // The content is on disk before it is renamed into place.
            if staged?.isSmall == true { try await diskFlush.flush() }
        }
        // The folder a big content was put into, made durable on its own below (small ones share the flush).
        var folderOfBigContent: FilePath?
        let modified = try withTree("modify \(id)") { [staged] tree in
            guard var item = try tree.locate(id, in: container) else {
                throw FolioError.notFound("item \(id) in \(container)")
            }
            let plan = try tree.planMove(of: item, changes)
            // A new modification time alone makes a new version of a file: still this writer's own (stamped
            // below) if the one before was its base or its own.
            // A change without content to a file another writer changed since the base is made, and said so.
            var ownedVersion: String?
            var changedElsewhere = false
            if staged == nil, item.kind == .file {
                let before = try tree.remoteItem(for: item).version
                if before == baseVersion
                    || tree.isUnchangedWrite(by: changes.retryTag, at: item, version: before) {
                    if changes.modificationTime != nil { ownedVersion = before }
                } else {
                    changedElsewhere = true
                }
            }
            if let staged {
                (item, renamed) = try tree.replaceContents(
                    of: item, baseVersion: baseVersion, staged: staged, modificationTime: changes.modificationTime,
                    retryTag: changes.retryTag)
            }
            if let plan { item = try tree.move(item, as: plan) }
            if renamed, staged?.isSmall == false { folderOfBigContent = item.path.removingLastComponent() }
            item = try tree.applyAttributes(changes, to: item)
            if let tags = changes.tags, item.kind != .symlink { try tree.layout.applyTags(tags, to: item.id) }
            var modified = try tree.remoteItem(for: item)
            tree.noteChanged(modified)
            if let ownedVersion, modified.version != ownedVersion {
                // Best effort: the change is made; without the stamp a retry from the old base conflicts.
                try? tree.stampWrite(by: changes.retryTag, version: modified.version, on: item)
            }
            if changedElsewhere { modified.changedElsewhere = true }
            return modified
        }
        if staged?.isSmall ?? false { try await diskFlush.flush() }
        if let folderOfBigContent { try SystemCalls.syncFolder(at: folderOfBigContent) }
        try gate.reply("modify \(id)")
        return modified
    }

    /// Deletes an item; an item already gone is fine, a folder must be empty, and a file no longer at
    /// `baseVersion` (nor at a version `retryTag` wrote) is a `.conflict`.
    public func deleteItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?
    ) async throws {
        try await recognizing("delete \(id)") {
            _ = try await admit("delete \(id)")
            try withTree("delete \(id)") {
                try $0.delete(id, in: container, baseVersion: baseVersion, retryTag: retryTag)
            }
        }
        forgetDescription(of: id)
        SystemCalls.removeFileQuietly(layout.tagsFile(of: id))
        try gate.reply("delete \(id)")
    }

}
