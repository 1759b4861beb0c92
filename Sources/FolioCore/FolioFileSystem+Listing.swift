/// Lists folders from the provider on demand (File Provider's enumerator of one folder): the core asks for a
/// folder when it is first looked up in or listed. Concurrent calls for one folder share one listing.
public protocol FolderListing: Sendable {
    /// Returns once the folder's children are listed and merged
    /// (``FolioFileSystem/applyFolderListing(_:items:epoch:)``); throws if the provider could not list it (offline,
    /// say).
    func listFolder(_ ino: UInt64) async throws(FolioError)
}

/// Where a folder that needs listing is on the provider.
public struct ListingTarget: Sendable, Hashable {
    /// The folder's container.
    public var container: ContainerID
    /// The folder's item id; `nil` for the container's root.
    public var folder: ItemID?
}

extension FolioFileSystem {
    /// Connects the service that lists folders on demand.
    public func connect(lister: any FolderListing) {
        hooks.withLock { $0.lister = lister }
    }

    var lister: (any FolderListing)? { hooks.withLock { $0.lister } }

    /// Whether `ino` is a folder whose children have to be listed from the provider before they are known, or
    /// listed again (a listing of an earlier run of the daemon: changes made by hand while no daemon ran are not
    /// in any change journal), and a lister is connected to do it.
    public func needsListing(_ ino: UInt64) -> Bool {
        guard lister != nil else { return false }
        return state.withLock { Self.needsListing(ino, state: $0) }
    }

    /// ``needsListing(_:)`` under the state lock.
    private static func needsListing(_ ino: UInt64, state: borrowing State) -> Bool {
        guard let node = state.nodes[ino] else { return false }
        return node.needsListing || state.unconfirmedListings.contains(ino)
    }

    /// Where the folder `ino` is on the provider, if it still needs listing (`nil`: gone, or listed already).
    public func listingTarget(_ ino: UInt64) -> ListingTarget? {
        state.withLock { state in
            guard let node = state.nodes[ino], Self.needsListing(ino, state: state) else { return nil }
            let container = node.remoteContainer ?? node.container
            return ListingTarget(container: container, folder: node.itemID.isContainerRoot ? nil : node.itemID)
        }
    }

    /// Lists the folder `ino` from the provider if it was never listed (a no-op otherwise, and without a lister).
    public func ensureListed(_ ino: UInt64) async throws(FolioError) {
        guard needsListing(ino), let lister else { return }
        try await lister.listFolder(ino)
    }

    /// ``lookup(parent:name:)`` once the folder is listed. A listing that fails (offline) is logged and the
    /// lookup answers from what the tree knows; it fails with the listing's error only if the name is unknown.
    public func lookupListing(parent: UInt64, name: String) async throws(FolioError) -> Attributes {
        var listingError: FolioError?
        do {
            try await ensureListed(parent)
        } catch {
            logger.warning("cannot list folder \(parent) now, answering from what is known: \(error)")
            listingError = error
        }
        do {
            return try lookup(parent: parent, name: name)
        } catch {
            // An unknown name in a folder never listed may exist on the remote: the listing's error says why it is
            // not known. In a folder listed by an earlier run (listed again when it can be), what is known answers.
            let everListed = state.withLock { $0.nodes[parent]?.childrenListed ?? false }
            if case .notFound = error, let listingError, !everListed { throw listingError }
            throw error
        }
    }

    /// ``openDirectory(_:)`` once the folder is listed; a folder that cannot be listed now (offline) shows what
    /// the tree knows (and the failure is logged).
    public func openDirectoryListing(_ ino: UInt64) async throws(FolioError) -> UInt64 {
        do {
            try await ensureListed(ino)
        } catch {
            logger.warning("cannot list folder \(ino) now, showing what is known: \(error)")
        }
        return try openDirectory(ino)
    }

    /// ``resolve(path:in:)``, listing the folders on the way that were never listed (for the control socket).
    public func resolveListing(path: String, in view: NamespaceView = .full) async throws(FolioError) -> UInt64 {
        var resolved = ""
        for component in path.split(separator: "/") where component != "." && !component.isEmpty {
            let folder = try resolve(path: resolved, in: view)
            if component != ".." {
                do {
                    try await ensureListed(folder)
                } catch {
                    logger.warning("cannot list \(resolved.isEmpty ? "/" : resolved) now: \(error)")
                }
            }
            resolved += (resolved.isEmpty ? "" : "/") + component
        }
        return try resolve(path: path, in: view)
    }

    /// Lists every folder at or below `ino` that was never listed, folder by folder (for `folio download` and
    /// pinned folders). Stops at the first failure.
    public func listSubtree(_ ino: UInt64) async throws(FolioError) {
        var folders = [ino]
        while let next = folders.popLast() {
            try await ensureListed(next)
            folders += childFolders(of: next)
        }
    }

    /// The folders in the folder `ino`, as far as the tree knows them.
    public func childFolders(of ino: UInt64) -> [UInt64] {
        state.withLock { state in
            (state.children[ino] ?? [:]).values.filter { state.nodes[$0]?.kind == .directory }
        }
    }

    /// Lists the roots of the containers that were never listed (the first mount of a state: most first looks
    /// are there). A root that cannot be listed now (offline) is listed when first looked at.
    public func listContainerRoots() async {
        let roots = state.withLock { state in
            state.nodes.values.filter { $0.itemID.isContainerRoot && $0.needsListing }.map(\.ino)
        }
        for root in roots {
            do {
                try await ensureListed(root)
            } catch {
                logger.warning("cannot list container root \(root) now: \(error)")
            }
        }
    }

    /// Pinned folders never listed (the content keeper lists them so what they hold is kept downloaded).
    public func pinnedFoldersToList() -> [UInt64] {
        guard lister != nil else { return [] }
        return state.withLock { state in
            state.nodes.pinned.filter { state.nodes[$0]?.needsListing ?? false }
        }
    }

    // MARK: Containers and anchors

    /// Brings the containers the remote holds into the tree (their roots, not listed yet) and stores the anchor
    /// taken for each container that has none, in one write. Returns the containers whose anchor was new while
    /// the tree already lists folders of theirs (a store from before anchors): changes since they were listed
    /// are unknown, so they need a resync.
    @discardableResult
    public func registerContainers(_ containers: [(Container, SyncAnchor?)]) throws(FolioError) -> [ContainerID] {
        try withStateLockForWriteThrough { state throws(FolioError) -> [ContainerID] in
            var batch = StoreBatch()
            var resync: [ContainerID] = []
            for (container, anchor) in containers {
                let rootIno = try containerRoot(container, batch: &batch, state: &state)
                guard let anchor, state.anchors[container.id] == nil else { continue }
                batch.anchors[container.id] = anchor
                if state.nodes[rootIno]?.childrenListed == true { resync.append(container.id) }
            }
            try persist(batch, state: &state)
            state.anchors.merge(batch.anchors) { $1 }
            return resync
        }
    }

    /// The stored sync anchor of a container (`nil`: never taken).
    public func anchor(of container: ContainerID) -> SyncAnchor? {
        state.withLock { $0.anchors[container] }
    }

    /// Stores a container's new anchor (after a resync listed again what the tree lists).
    public func recordAnchor(_ anchor: SyncAnchor, for container: ContainerID) throws(FolioError) {
        try withStateLockForWriteThrough { state throws(FolioError) in
            var batch = StoreBatch()
            batch.anchors[container] = anchor
            try persist(batch, state: &state)
            state.anchors[container] = anchor
        }
    }

    /// The listed folders of a container (what a resync lists again), its root first.
    public func listedFolders(in container: ContainerID) -> [UInt64] {
        state.withLock { state in
            var found: [UInt64] = []
            guard let root = state.rootIno(of: container)
            else { return [] }
            var folders = [root]
            while let next = folders.popLast() {
                guard let node = state.nodes[next], node.kind == .directory, node.childrenListed,
                      node.remoteVersion != nil else { continue }
                found.append(next)
                for child in (state.children[next] ?? [:]).values where state.nodes[child]?.kind == .directory {
                    if state.nodes[child]?.container == container { folders.append(child) }
                }
            }
            return found
        }
    }
}
