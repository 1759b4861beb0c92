/// The in-memory state of the filesystem core, guarded by the core's lock.
struct State: Sendable {
    var nodes = NodeTable()
    /// What of the store is not in memory yet (a state opened on its working set).
    var stored = StoredNodes()
    var children: [UInt64: [String: UInt64]] = [:] {
        didSet { childrenVersion &+= 1 }  // no `oldValue`: the dictionary is still changed in place
    }
    /// Bumped by every change of `children` or `references`: what ``linkCounts`` computed before is stale.
    private(set) var childrenVersion: UInt64 = 0
    /// Folders' link counts computed at a `childrenVersion`.
    let linkCounts = LinkCountCache()
    var byItemID: [ItemID: UInt64] = [:]
    /// Unlinked nodes that still have open handles.
    var orphans: [UInt64: Node] = [:]
    var tombstones = TombstoneTable()
    /// Documents that left their names moments ago, which a new file there takes over (editors' saves).
    var saves = SaveTracker()
    /// When the uploader is woken next because a save's window ends.
    var saveWindowTimer: SaveTracker.Moment?
    /// External references by folder: name → the item each opens.
    var references: [UInt64: [String: ItemID]] = [:] {
        didSet { childrenVersion &+= 1 }  // they take names too (the root's link count looks at them)
    }
    /// How many references open each item (the item's link count beyond its own name).
    var referenceCounts: [ItemID: Int] = [:]
    /// Conflict versions by item.
    var conflicts: [ItemID: [ConflictVersion]] = [:]
    /// The sync engine's bookkeeping: uploads and deletes in flight, uncertain uploads, conflict fetches, what
    /// waits and what is taken again (``SyncBook``).
    var sync = SyncBook()
    /// Recents and the inodes of virtual folders.
    var virtual = VirtualFolderState()
    var values: [String: String] = [:]
    var nextIno: UInt64 = 2
    var nextSequence: UInt64 = 1
    var nextHandle: UInt64 = 1
    var handles: [UInt64: OpenHandle] = [:]
    var handleCounts: [UInt64: Int] = [:]
    var sessions: [UInt64: WriteSession] = [:]
    var pageCaches: [UInt64: PageCacheState] = [:]
    /// How many times the kernel was handed each inode (lookup, create, readdirplus) minus its forgets: an
    /// unlinked node stays alive while the kernel may still use it.
    var lookupCounts: [UInt64: UInt64] = [:]
    /// Open handles per inode that bypass the page cache.
    var directHandles: [UInt64: Int] = [:]
    var progress: [UInt64: (done: Int64, total: Int64)] = [:]
    /// The bytes of a placeholder's current version kept here after the last reader closed (``PartialContent``),
    /// by inode: the node is `partial` and the next download of that version starts from them.
    var partials: [UInt64: PartialContent] = [:]
    /// Nodes stored or removed since the describer last took them (``FolioFileSystem/takeDescriptionWork()``).
    var describeWanted: Set<UInt64> = []
    /// The last reads that failed because the version they read is gone from the remote (`path: reason`, the
    /// newest last, at most ``FolioFileSystem/readFailuresKept``), for `folio status`.
    var readFailures: [String] = []
    var sessionWaiters: [UInt64: [UInt64: CheckedContinuation<Void, Never>]] = [:]
    var directoryListings: [UInt64: [ListedEntry]] = [:]
    /// Bumped by every metadata change, so an upload clears `metadataDirty` only if nothing changed since.
    var metadataEpochs: [UInt64: UInt64] = [:]
    /// Nodes whose rows the next group write stores as they are then (or deletes, if they left the namespace).
    var unsavedNodes: Set<UInt64> = []
    /// Tombstones the next group write stores as they are then (or deletes, if they are gone).
    var unsavedTombstones: Set<ItemID> = []
    /// Sync anchors the next write stores (those of a queued merge whose write failed, written again from memory).
    var unsavedAnchors: [ContainerID: SyncAnchor] = [:]
    /// Version files to delete once the staged rows that no longer refer to them are written.
    var unsavedFileRemovals: [String] = []
    var groupWriteScheduled = false
    /// The error of the last failed write to the store, until a write succeeds again: meanwhile every change
    /// is written through at once, so the operation that cannot be stored fails and leaves the tree unchanged
    /// (a commit whose queued write failed outside the lock is undone: `FolioFileSystem.undoCommit(_:state:)`).
    var storeFailure: FolioError?
    /// Folders not listed yet that appeared by a remote change since start (their creation was replayed to
    /// watchers): their first listing is replayed too. Not persisted.
    var foldersNewFromRemote: Set<UInt64> = []
    /// Folders listed by an earlier run of the daemon: the remote may have changed by hand while no daemon ran
    /// (where no change journal saw it), so each is listed again when first looked at in this run.
    var unconfirmedListings: Set<UInt64> = []
    /// The sync anchor of each container (``Provider/changes(in:since:)`` is asked from it), as stored.
    var anchors: [ContainerID: SyncAnchor] = [:]
    /// Provider reachability as last seen by the services.
    var providerOnline = true
    var lastProviderError: String?
    /// What the remote cannot do (``Provider/limitations()``), for `folio status`.
    var providerLimitations: [String] = []

    mutating func insert(_ node: Node) {
        nodes[node.ino] = node
        if node.parent != 0 {
            children[node.parent, default: [:]][node.name] = node.ino
        }
        if node.kind == .directory, children[node.ino] == nil {
            children[node.ino] = [:]
        }
        byItemID[node.itemID] = node.ino
        nextIno = max(nextIno, node.ino + 1)
        nextSequence = max(nextSequence, node.dirtySequence + 1)
    }

    /// Removes a node from the namespace (not from `orphans`).
    mutating func detach(_ ino: UInt64) {
        guard let node = nodes.removeValue(forKey: ino) else { return }
        virtual.lastOpened[ino] = nil
        if children[node.parent]?[node.name] == ino {
            children[node.parent]?[node.name] = nil
        }
        if byItemID[node.itemID] == ino {
            byItemID[node.itemID] = nil
        }
        if node.kind == .directory {
            children[ino] = nil
            stored.forget(ino)
        }
    }

    func node(_ ino: UInt64) -> Node? {
        nodes[ino] ?? orphans[ino]
    }

    mutating func allocateIno() -> UInt64 {
        defer { nextIno += 1 }
        return nextIno
    }

    mutating func allocateSequence() -> UInt64 {
        defer { nextSequence += 1 }
        return nextSequence
    }

    mutating func allocateHandle() -> UInt64 {
        defer { nextHandle += 1 }
        return nextHandle
    }

    /// The inode of a container's root (the Drive's is the full view's root), or `nil` for a container not known.
    func rootIno(of container: ContainerID) -> UInt64? {
        byItemID[.root(of: container)] ?? (container == .drive ? FolioFileSystem.rootIno : nil)
    }

    func child(_ parent: UInt64, _ name: String) -> UInt64? {
        children[parent]?[name]
    }

    /// The item a reference named `name` in `parent` opens.
    func reference(_ parent: UInt64, _ name: String) -> ItemID? {
        references[parent]?[name]
    }

    /// The inode `name` in `parent` leads to: a child, or the item a reference there opens.
    func entry(_ parent: UInt64, _ name: String) -> UInt64? {
        if let ino = children[parent]?[name] { return ino }
        if let target = references[parent]?[name] { return byItemID[target] }
        return nil
    }

    /// Whether `name` is used in `parent` (by a child or a reference).
    func isTaken(_ parent: UInt64, _ name: String) -> Bool {
        children[parent]?[name] != nil || references[parent]?[name] != nil
    }

    /// Whether a folder has no entries (neither children nor references).
    func isEmptyFolder(_ ino: UInt64) -> Bool {
        (children[ino]?.isEmpty ?? true) && (references[ino]?.isEmpty ?? true)
    }

    mutating func insertReference(_ reference: ExternalReference) {
        references[reference.parent, default: [:]][reference.name] = reference.target
        referenceCounts[reference.target, default: 0] += 1
    }

    /// Removes the reference at `location`; returns it, or `nil` if there is none.
    @discardableResult
    mutating func removeReference(at location: ExternalReference.Location) -> ExternalReference? {
        guard let target = references[location.parent]?.removeValue(forKey: location.name) else { return nil }
        if references[location.parent]?.isEmpty == true { references[location.parent] = nil }
        let remaining = (referenceCounts[target] ?? 1) - 1
        referenceCounts[target] = remaining > 0 ? remaining : nil
        return ExternalReference(parent: location.parent, name: location.name, target: target)
    }

    /// Every reference that opens `target`.
    func references(to target: ItemID) -> [ExternalReference] {
        guard referenceCounts[target] != nil else { return [] }
        var found: [ExternalReference] = []
        for (parent, entries) in references {
            for (name, item) in entries where item == target {
                found.append(ExternalReference(parent: parent, name: name, target: item))
            }
        }
        return found
    }

    /// Whether `ancestor` is `ino` or one of its ancestors.
    func isAncestor(_ ancestor: UInt64, of ino: UInt64) -> Bool {
        var current = ino
        while current != 0 {
            if current == ancestor { return true }
            guard let node = nodes[current] else { return false }
            current = node.parent
        }
        return false
    }

    /// Whether the pending change of `node` is one the remote refused until the user acts
    /// (``SyncBook/uploadsNeedingUser``): not changed since.
    func isHeldForUser(_ node: Node) -> Bool {
        sync.isHeldForUser(node.ino, sequence: node.dirtySequence)
    }

    /// How many pending nodes wait for the user: `failed`, held for the user, or inside folders not created yet
    /// whose create is held.
    var uploadsWaitingForUser: Int {
        if sync.uploadsNeedingUser.isEmpty && nodes.failed.isEmpty { return 0 }
        return nodes.pending.lazy.filter { ino in
            var next = nodes[ino]
            while let node = next {
                if case .failed = node.state { return true }
                if isHeldForUser(node) { return true }
                guard let parent = nodes[node.parent], parent.remoteVersion == nil else { return false }
                next = parent
            }
            return false
        }.count
    }

    /// The path of `ino` below the root of the container tree it is in (`Docs/a.txt`), or `nil` if it is gone.
    func path(of ino: UInt64) -> String? {
        var components: [String] = []
        var current = ino
        while let node = nodes[current], node.parent != 0 {
            components.append(node.name)
            current = node.parent
        }
        return nodes[current] == nil ? nil : components.reversed().joined(separator: "/")
    }

    /// The path of `ino` relative to `root` (`""` for the root itself), or `nil` when `ino` is not below it.
    func path(of ino: UInt64, below root: UInt64) -> String? {
        var components: [String] = []
        var current = ino
        while current != root {
            guard let node = nodes[current], node.parent != 0 else { return nil }
            components.append(node.name)
            current = node.parent
        }
        return components.reversed().joined(separator: "/")
    }

    /// Whether the provider may have the item: it was uploaded, or its create is running or may have landed
    /// without our knowing (its reply lost, or the daemon died while it ran). Removing such an item needs a
    /// remote delete, or the item comes back from the remote.
    func mayExistRemotely(_ node: Node) -> Bool {
        guard !node.kind.isLocalOnly else { return false }
        return node.remoteVersion != nil || sync.uploadsInFlight.contains(node.itemID)
            || sync.uncertainUploads.contains(node.itemID)
    }

    /// The number of open handles of a node.
    func openCount(_ ino: UInt64) -> Int { handleCounts[ino] ?? 0 }

    /// Whether the kernel or an open handle may still refer to `ino`.
    func isReferenced(_ ino: UInt64) -> Bool { openCount(ino) > 0 || (lookupCounts[ino] ?? 0) > 0 }

    /// Whether open handles of `ino` see different contents, so the kernel must not cache its attributes.
    func hasDivergentViews(_ ino: UInt64) -> Bool {
        let open = openCount(ino)
        guard open > 0 else { return false }
        if (directHandles[ino] ?? 0) > 0 { return true }
        if let session = sessions[ino], open > session.handles.count { return true }
        if let active = pageCaches[ino]?.activeKey, case .version(let file) = active,
           let current = node(ino)?.contentFile, file != current {
            return true
        }
        return false
    }
}
