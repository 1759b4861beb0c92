import Foundation

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

    /// `name` in the full view's root when it names a virtual folder and no item has that name.
    func virtualRootEntry(_ name: String, state: inout State) -> UInt64? {
        switch name {
        case VirtualFolder.recents.name: return state.virtual.ino(of: .recents)
        case VirtualFolder.tags.name: return state.virtual.ino(of: .tags)
        default: return nil
        }
    }

    /// The entries of a virtual folder, computed now.
    func virtualListing(_ ino: UInt64, state: inout State) throws(FolioError) -> [ListedEntry] {
        guard let folder = state.virtual.folders[ino] else { throw .notFound("inode \(ino)") }
        switch folder {
        case .recents:
            let used = state.virtual.lastUse.sorted { $0.value > $1.value }.compactMap { state.byItemID[$0.key] }
            let listable = used.filter { isListable($0, state: state) }
            return uniquelyNamed(listable.prefix(VirtualFolder.recentsLimit), state: state)
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
        case .tag(let tag):
            let tagged = state.nodes.values.filter { node in
                node.xattrs[VirtualFolder.tagsAttribute].map { VirtualFolder.tags(in: $0).contains(tag) } ?? false
            }
            let sorted = tagged.sorted { ($0.name, $0.ino) < ($1.name, $1.ino) }.map(\.ino)
            return uniquelyNamed(sorted.filter { isListable($0, state: state) }, state: state)
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
    }

    /// Documents of the full view (a virtual folder never shows a private container's items).
    private func isListable(_ ino: UInt64, state: borrowing State) -> Bool {
        guard let node = state.nodes[ino], node.kind == .file else { return false }
        return state.isAncestor(Self.rootIno, of: ino)
    }

    /// Entries named by the documents' names; a name already taken gets ` (2)`, ` (3)`… before its extension.
    private func uniquelyNamed<S: Sequence>(
        _ inos: S, state: borrowing State
    ) -> [ListedEntry] where S.Element == UInt64 {
        var taken: Set<String> = []
        var entries: [ListedEntry] = []
        for ino in inos {
            guard let node = state.nodes[ino] else { continue }
            var name = node.name
            var counter = 2
            while taken.contains(name) {
                name = NamePolicy.annotated(node.name, "\(counter)")
                counter += 1
            }
            taken.insert(name)
            entries.append(ListedEntry(name: name, ino: ino, isVolatile: true))
        }
        return entries
    }
}
