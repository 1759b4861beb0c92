/// A state opened on its working set (``FileSystemConfiguration/loadsOnDemand``) reads the rest of the store
/// folder by folder (``StoredNodes``): what needs a folder's children reads them first, what names items by id
/// reads the folders that hold them, and the daemon's background reader takes the folders left.
extension FolioFileSystem {
    /// Whether every stored node is in memory (always, for a state read whole).
    public var isFullyLoaded: Bool {
        state.withLock { $0.stored.isComplete }
    }

    /// Reads the stored children of up to `count` folders not read yet, one folder per take of the lock (the
    /// daemon's background reader, after the mount). Returns whether every stored node is now in memory.
    public func loadStoredFolders(count: Int) throws(FolioError) -> Bool {
        for _ in 0..<count {
            let complete = try state.withLock { state throws(FolioError) -> Bool in
                if let folder = state.stored.next { try loadStoredChildren(of: folder, state: &state) }
                return state.stored.isComplete
            }
            if complete { return true }
        }
        return isFullyLoaded
    }

    /// Reads the stored children of `folder` into memory unless they were read already.
    func loadStoredChildren(of folder: UInt64, state: inout State) throws(FolioError) {
        try Self.loadStoredChildren(of: folder, state: &state, store: store)
    }

    /// ``loadStoredChildren(of:state:)`` for every folder in `folders`.
    func loadStoredChildren(of folders: some Sequence<UInt64>, state: inout State) throws(FolioError) {
        guard !state.stored.isComplete else { return }
        for folder in folders { try loadStoredChildren(of: folder, state: &state) }
    }

    /// Reads the folders that hold the stored items among `items` that memory does not have.
    func loadStoredItems(_ items: some Sequence<ItemID>, state: inout State) throws(FolioError) {
        try Self.loadStoredItems(items, state: &state, store: store)
    }

    /// Reads every stored node still not in memory (what needs the whole tree: a resync, the tags folder).
    func loadAllStored(state: inout State) throws(FolioError) {
        while let folder = state.stored.next { try loadStoredChildren(of: folder, state: &state) }
    }

    /// ``loadStoredChildren(of:state:)`` before `self` is made.
    static func loadStoredChildren(of folder: UInt64, state: inout State, store: any MetadataStore) throws(FolioError) {
        guard !state.stored.isComplete, state.stored.take(folder) else { return }  // (every lookup comes here)
        let rows: [Node]
        do {
            rows = try store.loadChildren(of: folder)
        } catch {
            state.stored.giveBack(folder)
            throw error
        }
        if state.nodes[folder]?.kind == .directory {
            for row in rows where state.stored.admits(row) {
                // (A name or an id memory has is newer than the row: never the case while the rule holds.)
                guard state.nodes[row.ino] == nil, state.orphans[row.ino] == nil, state.byItemID[row.itemID] == nil,
                      !state.isTaken(folder, row.name) else { continue }
                state.adoptStored(row)
            }
        }
        state.stored.releaseIfComplete()
    }

    /// ``loadStoredItems(_:state:)`` before `self` is made.
    static func loadStoredItems(
        _ items: some Sequence<ItemID>, state: inout State, store: any MetadataStore
    ) throws(FolioError) {
        guard !state.stored.isComplete else { return }
        var unknown: Set<ItemID> = []
        for item in items where state.byItemID[item] == nil { unknown.insert(item) }
        guard !unknown.isEmpty else { return }
        for folder in try store.folders(holding: Array(unknown)) {
            try loadStoredChildren(of: folder, state: &state, store: store)
        }
    }
}

extension State {
    /// Takes a node read from the store into memory, with what its stored state says is in progress: a listing of
    /// an earlier run to confirm, a conflict, an upload that may have landed.
    mutating func adoptStored(_ node: Node) {
        insert(node)
        if node.kind == .directory, node.childrenListed, !node.needsCreate {
            unconfirmedListings.insert(node.ino)
        }
        if node.state == .conflicted { _ = sync.conflictFound(node.itemID) }
        // An upload the daemon was doing when it died may have landed, and the outcome of one that ended is
        // written with the group write after it: unknown either way (which item was in flight is not stored, so
        // every item with a local version or metadata change waiting is treated so, until uploaded; so is every
        // item still to be created).
        switch node.state {
        case .dirty, .uploading: if node.remoteVersion != nil { sync.uploadMayHaveLanded(node.itemID) }
        default: break
        }
        if node.needsCreate || (node.metadataDirty && node.remoteVersion != nil) {
            sync.uploadMayHaveLanded(node.itemID)
        }
    }
}
