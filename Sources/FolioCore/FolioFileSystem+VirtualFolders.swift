import Foundation

/// Told of every document opened or committed (for the desktop's list of recent files).
public protocol UsageObserving: Sendable {
    /// `item` was opened or committed. Called with the core's lock held: it must only note the call and return.
    func documentUsed(_ item: ItemID)
}

extension FolioFileSystem {
    /// Whether `ino` is a virtual folder (`.Recents/`, `.Tags/`, `.Tags/<tag>/`), whose listing the kernel must
    /// not cache: it changes without a request through the mount.
    public func isVirtualFolder(_ ino: UInt64) -> Bool { VirtualFolder.isVirtual(ino) }

    /// Refuses a change inside a virtual folder (`EROFS`).
    func refuseVirtual(_ ino: UInt64) throws(FolioError) {
        guard VirtualFolder.isVirtual(ino) else { return }
        throw .readOnly("virtual folders (.Recents, .Tags) are read-only: change the documents where they are")
    }

    /// The attributes of a virtual folder, or `nil` if `ino` is not one.
    func virtualAttributes(_ ino: UInt64, state: borrowing State) -> Attributes? {
        guard state.virtual.folders[ino] != nil, let root = state.nodes[Self.rootIno] else { return nil }
        var attributes = Attributes(
            ino: ino, kind: .directory, permissions: 0o555, linkCount: 2, uid: root.uid, gid: root.gid, size: 0,
            accessTime: root.accessTime, modificationTime: root.modificationTime, changeTime: root.changeTime)
        attributes.isVolatile = true
        return attributes
    }

    /// The virtual folders in folder `ino`: `.Recents/` and `.Tags/` in the full view's root, `.Recents/` in the
    /// root of every app container (its app view's root).
    func virtualFolders(at ino: UInt64, state: borrowing State) -> [VirtualFolder] {
        if ino == Self.rootIno { return [.recents, .tags] }
        guard let node = state.nodes[ino], node.itemID.isContainerRoot, node.container != .drive else { return [] }
        return [.appRecents(node.container)]
    }

    /// `name` in folder `parent` when it names a virtual folder there (an item of that name hides it).
    func virtualRootEntry(_ name: String, in parent: UInt64, state: inout State) -> UInt64? {
        guard let folder = virtualFolders(at: parent, state: state).first(where: { $0.name == name }) else {
            return nil
        }
        return state.virtual.ino(of: folder)
    }

    /// The entries of a virtual folder, computed now.
    func virtualListing(_ ino: UInt64, state: inout State) throws(FolioError) -> [ListedEntry] {
        guard let folder = state.virtual.folders[ino] else { throw .notFound("inode \(ino)") }
        // (What was opened or is tagged may be in folders not read from the store yet.)
        switch folder {
        case .recents, .appRecents: try loadStoredItems(state.virtual.lastUse.keys, state: &state)
        case .tags, .tag: try loadAllStored(state: &state)
        }
        switch folder {
        case .recents:
            let used = state.virtual.lastUse.sorted { $0.value > $1.value }.compactMap { state.byItemID[$0.key] }
            let listable = used.filter { isListable($0, state: state) }
            let listed = listable.prefix(VirtualFolder.recentsLimit).compactMap { ino in
                state.nodes[ino].map { (ino: ino, name: $0.name) }
            }
            return uniquelyNamed(listed, state: state)
        case .tags:
            var tags: Set<String> = []
            for node in state.nodes.values where node.kind == .file {
                guard let value = node.xattrs[VirtualFolder.tagsAttribute] else { continue }
                let found = VirtualFolder.tags(in: value)
                if !found.isEmpty, state.isAncestor(Self.rootIno, of: node.ino) { tags.formUnion(found) }
            }
            return tags.sorted().map { tag in
                ListedEntry(name: tag, ino: state.virtual.ino(of: .tag(tag)), isVolatile: true)
            }
        case .appRecents(let container):
            guard let appRoot = state.byItemID[.root(of: container)] else { return [] }
            let used = state.virtual.lastUse.sorted { $0.value > $1.value }.compactMap { state.byItemID[$0.key] }
            // Each document under the name the app sees it by: its own, or its reference's in the app's container.
            var named: [(ino: UInt64, name: String)] = []
            for ino in used where named.count < VirtualFolder.recentsLimit {
                guard let node = state.nodes[ino], node.kind == .file else { continue }
                if state.path(of: ino, below: appRoot) != nil {
                    named.append((ino, node.name))
                } else if let reference = state.references(to: node.itemID).sorted(by: { $0.name < $1.name })
                    .first(where: { state.path(of: $0.parent, below: appRoot) != nil }) {
                    named.append((ino, reference.name))
                }
            }
            return uniquelyNamed(named, state: state)
        case .tag(let tag):
            let tagged = state.nodes.values.filter { node in
                node.xattrs[VirtualFolder.tagsAttribute].map { VirtualFolder.tags(in: $0).contains(tag) } ?? false
            }
            let sorted = tagged.sorted { ($0.name, $0.ino) < ($1.name, $1.ino) }
            return uniquelyNamed(
                sorted.filter { isListable($0.ino, state: state) }.map { (ino: $0.ino, name: $0.name) }, state: state)
        }
    }

    /// Looks `name` up in a virtual folder: a tag's folder, or a document (its own inode).
    func virtualLookup(parent: UInt64, name: String, state: inout State) throws(FolioError) -> Attributes {
        guard let entry = try virtualListing(parent, state: &state).first(where: { $0.name == name }) else {
            throw .notFound(name)
        }
        if var folder = virtualAttributes(entry.ino, state: state) {
            folder.isVolatileEntry = true
            return folder
        }
        guard let node = state.nodes[entry.ino] else { throw .notFound(name) }
        state.lookupCounts[node.ino, default: 0] += 1
        var attributes = attributes(of: node, state: state)
        attributes.isVolatileEntry = true
        return attributes
    }

    /// Records that an item was used (opened or committed) for `.Recents/`; stored with the next group write.
    func recordUse(of node: Node, state: inout State) {
        guard node.kind == .file else { return }
        let now = Timestamp.now()
        state.virtual.lastOpened[node.ino] = now
        state.virtual.recordUse(of: node.itemID, at: now)
        if state.virtual.lastUseUnsaved { scheduleGroupWrite(state: &state) }
        usageHook.withLock { $0 }?.documentUsed(node.itemID)
    }

    /// Connects the service told of every document used (opened or committed).
    public func connect(usageObserver: any UsageObserving) {
        usageHook.withLock { $0 = usageObserver }
    }

    /// Documents of the full view (a virtual folder never shows a private container's items).
    private func isListable(_ ino: UInt64, state: borrowing State) -> Bool {
        guard let node = state.nodes[ino], node.kind == .file else { return false }
        return state.isAncestor(Self.rootIno, of: ino)
    }

    /// Entries named by the documents' names; a name already taken gets ` (2)`, ` (3)`… before its extension.
    private func uniquelyNamed(_ documents: [(ino: UInt64, name: String)], state: borrowing State) -> [ListedEntry] {
        var taken: Set<String> = []
        var entries: [ListedEntry] = []
        for (ino, given) in documents {
            var name = given
            var counter = 2
            while taken.contains(name) {
                name = NamePolicy.annotated(given, "\(counter)")
                counter += 1
            }
            taken.insert(name)
            entries.append(ListedEntry(name: name, ino: ino, isVolatile: true))
        }
        return entries
    }
}
