/// Where an item can be reached, for bookmarks and grants: by its id, whatever its path is now.
extension FolioFileSystem {
    /// The inode of the item with id `item`, or `nil` if this state knows no such item (deleted, or never seen).
    public func ino(of item: ItemID) -> UInt64? {
        state.withLock { state in
            try? loadStoredItems([item], state: &state)  // (a store that cannot be read: what memory knows)
            return state.byItemID[item]
        }
    }

    /// Every path relative to the root of `view` at which the item `item` can be opened: its own place when that
    /// is below the view's root first, then each external reference to it below the root (sorted). Empty when
    /// the view cannot reach the item (it is in a container the view does not show, and nobody granted it).
    public func locations(of item: ItemID, in view: NamespaceView) throws(FolioError) -> [String] {
        let root = try rootIno(of: view)
        return state.withLock { state in
            try? loadStoredItems([item], state: &state)
            guard let ino = state.byItemID[item] else { return [] }
            var found: [String] = []
            if let own = state.path(of: ino, below: root) { found.append(own) }
            var viaReferences: [String] = []
            for (folder, names) in state.references {
                for (name, target) in names where target == item {
                    guard let folderPath = state.path(of: folder, below: root) else { continue }
                    viaReferences.append(folderPath.isEmpty ? name : folderPath + "/" + name)
                }
            }
            return found + viaReferences.sorted()
        }
    }

    /// The id of the item at `ino` and the id of the folder it is in (`nil` for a container's root level),
    /// with its name there.
    public func identity(of ino: UInt64) -> (item: ItemID, folder: ItemID?, name: String)? {
        state.withLock { state in
            guard let node = state.nodes[ino], node.parent != 0 else { return nil }
            let folder = state.nodes[node.parent].map(\.itemID)
            return (node.itemID, folder, node.name)
        }
    }

    /// The item now named `name` in the folder with id `folder` (the item that took a replaced document's
    /// place), or `nil`.
    public func item(named name: String, inFolder folder: ItemID) -> ItemID? {
        state.withLock { state in
            guard let parent = state.byItemID[folder] else { return nil }
            try? loadStoredChildren(of: parent, state: &state)
            guard let ino = state.entry(parent, name),
                  let node = state.nodes[ino] else { return nil }
            return node.itemID
        }
    }

    /// Every external reference (grant) whose document is `item` (all of them when `nil`): where each is, in
    /// which app container, and where its document is.
    public func grants(of item: ItemID? = nil) -> [Grant] {
        state.withLock { state in
            var grants: [Grant] = []
            for (folder, names) in state.references {
                guard let folderNode = state.nodes[folder] else { continue }
                let containerRoot = state.byItemID[.root(of: folderNode.container)] ?? Self.rootIno
                let folderPath = state.path(of: folder, below: containerRoot) ?? ""
                for (name, target) in names where item == nil || target == item {
                    let document = state.byItemID[target]
                    grants.append(Grant(
                        app: folderNode.container,
                        path: folderPath.isEmpty ? name : folderPath + "/" + name,
                        document: target,
                        documentPath: document.flatMap { state.path(of: $0, below: Self.rootIno) }))
                }
            }
            return grants.sorted { ($0.app, $0.path) < ($1.app, $1.path) }
        }
    }

    /// Removes every external reference to the document at `document` that is inside app container `app`
    /// (`folio revoke`); the document stays. Returns how many were removed.
    @discardableResult
    public func revokeReferences(to document: UInt64, app: ContainerID) throws(FolioError) -> Int {
        let appRoot = try rootIno(of: .app(app))
        let removed = try state.withLock { state throws(FolioError) -> [ExternalReference.Location] in
            guard let item = state.nodes[document] else { throw .notFound("inode \(document)") }
            var locations: [ExternalReference.Location] = []
            for (folder, names) in state.references where state.path(of: folder, below: appRoot) != nil {
                for (name, target) in names where target == item.itemID {
                    locations.append(ExternalReference.Location(parent: folder, name: name))
                }
            }
            for location in locations { try removeReference(at: location, state: &state) }
            return locations
        }
        // Not a request through the mount: the kernel forgets the names and learns the new link count from us
        // (a file an app already has open stays open, as after a rename away).
        for location in removed { invalidator?.invalidateEntry(parent: location.parent, name: location.name) }
        for folder in Set(removed.map(\.parent)) { invalidator?.invalidateInode(folder) }
        if !removed.isEmpty { invalidator?.invalidateInode(document) }
        return removed.count
    }
}

/// An external reference as `folio grants` lists it.
public struct Grant: Hashable, Sendable, Codable {
    /// The app container that holds the reference.
    public var app: ContainerID
    /// The reference's path in that container.
    public var path: String
    /// The document's item id.
    public var document: ItemID
    /// The document's path in the full view (`nil` when it is in a private container).
    public var documentPath: String?

    /// Creates a grant description.
    public init(app: ContainerID, path: String, document: ItemID, documentPath: String?) {
        self.app = app
        self.path = path
        self.document = document
        self.documentPath = documentPath
    }
}

extension FolioFileSystem {
    /// The documents used last (opened or committed, most recent first, at most ``VirtualFolder/recentsLimit``)
    /// that `view` can open, each at its first path in the view. Kept by item id: renames and moves keep them.
    public func recents(in view: NamespaceView) throws(FolioError) -> [RecentDocument] {
        let used = state.withLock { $0.virtual.lastUse.sorted { $0.value > $1.value } }
        var recents: [RecentDocument] = []
        for (item, time) in used where recents.count < VirtualFolder.recentsLimit {
            guard let path = try locations(of: item, in: view).first else { continue }
            recents.append(RecentDocument(id: item.rawValue, path: path, lastUsed: time))
        }
        return recents
    }
}

/// A document of `folio recents`.
public struct RecentDocument: Hashable, Sendable, Codable {
    /// The item id.
    public var id: String
    /// Its path relative to the view's root.
    public var path: String
    /// When it was last opened or committed.
    public var lastUsed: Timestamp

    /// Creates an entry.
    public init(id: String, path: String, lastUsed: Timestamp) {
        self.id = id
        self.path = path
        self.lastUsed = lastUsed
    }
}
