import Foundation

extension FolioFileSystem {
    // MARK: Attributes

    func attributes(of node: Node, state: borrowing State, handle: UInt64? = nil) -> Attributes {
        // The kernel keeps one size per inode and clips page-cache reads to it; direct-I/O reads go to the
        // daemon whatever it is, each bounded by its handle's own version. So while open handles see different
        // versions, the size is the one of the view in the page cache: were it larger, a cached reader of a
        // shorter version would get the kernel's zero fill past its end as data (a short read leaves the size
        // as it is when attributes changed meanwhile). With no handle cached, it is the newest.
        var size = state.sessions[node.ino]?.size ?? node.size
        if state.hasDivergentViews(node.ino) {
            var cached: Int64?
            for open in state.handles.values where open.ino == node.ino && open.isCached {
                let viewSize = open.readFD != nil ? open.snapshotSize : size
                cached = max(cached ?? 0, viewSize)
            }
            size = cached ?? size
        }
        var attributes = Attributes(
            ino: node.ino, kind: node.kind, permissions: node.mode, linkCount: linkCount(of: node, state: state),
            uid: node.uid, gid: node.gid, size: node.kind == .symlink ? Int64(node.symlinkTarget?.utf8.count ?? 0) : size,
            accessTime: node.accessTime, modificationTime: node.modificationTime, changeTime: node.changeTime)
        attributes.isVolatile = node.kind == .file && state.hasDivergentViews(node.ino)
        attributes.device = node.device
        if node.kind == .file { attributes.blocks = localBlocks(of: node, state: state) }
        return attributes
    }

    /// `st_nlink`: 0 for an unlinked node that is still open; a folder's is 2 plus its subfolders (the
    /// virtual folders included in the root); a file's is 1 plus the references that open it.
    private func linkCount(of node: Node, state: borrowing State) -> UInt32 {
        guard state.nodes[node.ino] != nil else { return 0 }
        guard node.kind == .directory else { return 1 + UInt32(state.referenceCounts[node.itemID] ?? 0) }
        return state.linkCounts.count(of: node.ino, at: state.childrenVersion) {
            var count: UInt32 = 2
            for child in (state.children[node.ino] ?? [:]).values where state.nodes[child]?.kind == .directory {
                count += 1
            }
            for folder in virtualFolders(at: node.ino, state: state) where !state.isTaken(node.ino, folder.name) {
                count += 1
            }
            return count
        }
    }

    /// `st_blocks` of a file: what its content takes on this machine (nothing for a placeholder), so `du` of a
    /// folder of placeholders says it uses nothing.
    private func localBlocks(of node: Node, state: borrowing State) -> Int64 {
        if let session = state.sessions[node.ino] { return cache.allocatedBlocks(of: session.fd) }
        guard node.state.hasLocalContent, let file = node.contentFile else { return 0 }
        return cache.allocatedBlocks(of: file)
    }

    /// Looks up `name` in folder `parent`.
    public func lookup(parent: UInt64, name: String) throws(FolioError) -> Attributes {
        try state.withLock { state throws(FolioError) in
            if VirtualFolder.isVirtual(parent) {
                try configuration.namePolicy.checkLength(name)
                return try virtualLookup(parent: parent, name: name, state: &state)
            }
            try loadStoredChildren(of: parent, state: &state)
            guard let directory = state.nodes[parent] else { throw .notFound("folder \(parent)") }
            guard directory.kind == .directory else { throw .notDirectory(directory.name) }
            guard let ino = state.entry(parent, name), let node = state.nodes[ino] else {
                if let folder = virtualRootEntry(name, in: parent, state: &state),
                   let attributes = virtualAttributes(folder, state: state) {
                    return attributes
                }
                throw missing(name)
            }
            state.lookupCounts[ino, default: 0] += 1
            return attributes(of: node, state: state)
        }
    }

    /// The attributes of `ino`, as seen through `handle` when given (a reader sees its snapshot's size).
    public func getAttributes(_ ino: UInt64, handle: UInt64? = nil) throws(FolioError) -> Attributes {
        try state.withLock { state throws(FolioError) in
            guard let node = state.node(ino) else {
                if let attributes = virtualAttributes(ino, state: state) { return attributes }
                throw .notFound("inode \(ino)")
            }
            return attributes(of: node, state: state, handle: handle)
        }
    }

    /// The node of `ino` (a copy).
    public func node(_ ino: UInt64) -> Node? {
        state.withLock { $0.node(ino) }
    }

    /// The inode of a view's root: the full view's root, or an app's container root (`ENOENT` for a container
    /// this state has never seen).
    public func rootIno(of view: NamespaceView) throws(FolioError) -> UInt64 {
        switch view {
        case .full:
            return Self.rootIno
        case .app(let container):
            if container == .drive { return Self.rootIno }
            guard let ino = state.withLock({ $0.byItemID[.root(of: container)] }) else {
                throw .notFound("no container \(container) on this remote")
            }
            return ino
        }
    }

    /// The inode at a path relative to a view's root (`a/b/c`), for the control socket. `..` never leaves
    /// the view.
    public func resolve(path: String, in view: NamespaceView = .full) throws(FolioError) -> UInt64 {
        let root = try rootIno(of: view)
        return try state.withLock { state throws(FolioError) in
            var current = root
            var trail: [UInt64] = []
            for component in path.split(separator: "/") where component != "." && !component.isEmpty {
                if component == ".." {
                    current = trail.popLast() ?? root
                    continue
                }
                trail.append(current)
                try loadStoredChildren(of: current, state: &state)
                guard let next = state.entry(current, String(component)) else {
                    throw .notFound(path)
                }
                current = next
            }
            return current
        }
    }

    /// The path of `ino` relative to `root` (the full view's root unless given: a view's root, see
    /// ``rootIno(of:)``), or `nil` for a node outside that tree.
    public func path(of ino: UInt64, below root: UInt64 = FolioFileSystem.rootIno) -> String? {
        state.withLock { $0.path(of: ino, below: root) }
    }

    // MARK: Creating

    /// Adds a new node named `name` to folder `parent`: checks, one transaction (the node and the parent's
    /// times), then the namespace. `configure` sets kind-specific fields before anything is stored.
    func addChild(
        parent: UInt64, name: String, kind: ItemKind, permissions: UInt32, context: RequestContext,
        state: inout State, configure: (inout Node) throws(FolioError) -> Void = { _ in }
    ) throws(FolioError) -> Node {
        try refuseVirtual(parent)
        try loadStoredChildren(of: parent, state: &state)
        guard let directory = state.nodes[parent] else { throw .notFound("folder \(parent)") }
        guard directory.kind == .directory else { throw .notDirectory(directory.name) }
        if state.isTaken(parent, name) { throw .exists(name) }
        if kind.isLocalOnly {
            try configuration.namePolicy.validateLocal(name)
        } else {
            try configuration.namePolicy.validate(name)
        }
        let now = Timestamp.now()
        var node = Node(
            ino: state.allocateIno(), itemID: .generate(), container: directory.container, parent: parent,
            name: name, kind: kind, modificationTime: now, mode: permissions & 0o7777, uid: context.uid,
            gid: context.gid, state: .materialized, dirtySequence: state.allocateSequence())
        if directory.mode & 0o2000 != 0 { node.gid = directory.gid }
        node.pinned = directory.pinned
        try configure(&node)
        var updatedParent = directory
        updatedParent.modificationTime = now
        updatedParent.changeTime = now
        var batch = StoreBatch()
        batch.upserts = [node, updatedParent]
        try stage(batch, state: &state)
        state.nodes[parent] = updatedParent
        state.insert(node)
        state.lookupCounts[node.ino, default: 0] += 1
        return node
    }

    /// Creates a folder, symlink, FIFO, socket or device node; the uploader is woken for anything that is not
    /// local only.
    private func insertChild(
        parent: UInt64, name: String, kind: ItemKind, permissions: UInt32, symlinkTarget: String?,
        device: UInt64 = 0, context: RequestContext
    ) throws(FolioError) -> Attributes {
        let result = try state.withLock { state throws(FolioError) in
            let node = try addChild(
                parent: parent, name: name, kind: kind, permissions: permissions, context: context, state: &state
            ) { node in
                node.symlinkTarget = symlinkTarget
                node.device = device
            }
            return attributes(of: node, state: state)
        }
        announce([.entry(parent, name), .inode(parent)])
        if !kind.isLocalOnly { notifyUploader() }
        return result
    }

    /// Creates a folder.
    public func makeDirectory(
        parent: UInt64, name: String, permissions: UInt32, context: RequestContext
    ) throws(FolioError) -> Attributes {
        try insertChild(
            parent: parent, name: name, kind: .directory, permissions: permissions, symlinkTarget: nil,
            context: context)
    }

    /// Creates a symlink.
    public func makeSymlink(
        parent: UInt64, name: String, target: String, context: RequestContext
    ) throws(FolioError) -> Attributes {
        try insertChild(
            parent: parent, name: name, kind: .symlink, permissions: 0o777, symlinkTarget: target, context: context)
    }

    /// Creates a FIFO, socket or device node (local only, never uploaded: gone with the local state) or an
    /// empty file. `device` is a device node's number (`st_rdev`); the kernel lets only privileged callers
    /// make device nodes.
    public func makeNode(
        parent: UInt64, name: String, kind: ItemKind?, permissions: UInt32, device: UInt64 = 0,
        context: RequestContext
    ) throws(FolioError) -> Attributes {
        guard let kind, kind != .directory, kind != .symlink else {
            throw .invalidArgument("mknod makes files, FIFOs, sockets and device nodes only")
        }
        if kind == .file {
            let (attributes, handle) = try createFile(
                parent: parent, name: name, permissions: permissions, flags: O_WRONLY, context: context)
            try release(handle)
            return attributes
        }
        return try insertChild(
            parent: parent, name: name, kind: kind, permissions: permissions, symlinkTarget: nil,
            device: kind.isDevice ? device : 0, context: context)
    }

    /// The target of a symlink.
    public func readSymlink(_ ino: UInt64) throws(FolioError) -> String {
        try state.withLock { state throws(FolioError) in
            guard let node = state.node(ino) else { throw .notFound("inode \(ino)") }
            guard node.kind == .symlink, let target = node.symlinkTarget else {
                throw .invalidArgument("\(node.name) is not a symlink")
            }
            return target
        }
    }

    // MARK: Removing

    /// Removes a file, symlink, FIFO or socket. Open handles keep working. A file that `context`'s process puts
    /// at the name moments later takes the document over (an editor's save, see ``SaveTracker``).
    public func unlink(parent: UInt64, name: String, context: RequestContext = .internalRequest) throws(FolioError) {
        defer { announce([.entry(parent, name), .inode(parent)]) }
        try state.withLock { state throws(FolioError) in
            try refuseVirtual(parent)
            try loadStoredChildren(of: parent, state: &state)
            if state.reference(parent, name) != nil {
                try removeReference(at: .init(parent: parent, name: name), state: &state)
                return
            }
            guard let ino = state.child(parent, name), let node = state.nodes[ino] else { throw missing(name) }
            guard node.kind != .directory else { throw .isDirectory(name) }
            let references = state.references(to: node.itemID).map(\.location)
            var batch = StoreBatch()
            try remove(node, batch: &batch, state: &state)
            recordDeparture(of: node, references: references, processID: context.processID, state: &state)
        }
        notifyUploader()
    }

    /// Removes an empty folder.
    public func removeDirectory(parent: UInt64, name: String) throws(FolioError) {
        defer { announce([.entry(parent, name), .inode(parent)]) }
        try state.withLock { state throws(FolioError) in
            try refuseVirtual(parent)
            try loadStoredChildren(of: parent, state: &state)
            guard let ino = state.child(parent, name), let node = state.nodes[ino] else {
                if let folder = virtualRootEntry(name, in: parent, state: &state) {
                    try refuseVirtual(folder)
                }
                throw missing(name)
            }
            guard node.kind == .directory else { throw .notDirectory(name) }
            try loadStoredChildren(of: ino, state: &state)
            guard node.parent != 0, !node.itemID.isContainerRoot else {
                throw .notPermitted("\(name) is a container; containers are not removed from the mount")
            }
            guard state.isEmptyFolder(ino) else { throw .notEmpty(name) }
            var batch = StoreBatch()
            try remove(node, batch: &batch, state: &state)
        }
        notifyUploader()
    }

    /// Removes `node` from the namespace, queueing its remote delete; it stays alive as an orphan while open.
    func remove(_ node: Node, batch: inout StoreBatch, state: inout State) throws(FolioError) {
        if node.itemID.isContainerRoot { throw .notPermitted("containers cannot be removed") }
        batch.deletes.append(node.ino)
        // The item is gone, so are the references that opened it.
        let references = state.references(to: node.itemID)
        batch.referenceDeletes += references.map(\.location)
        var tombstone: Tombstone?
        if state.mayExistRemotely(node) {
            tombstone = Tombstone(
                itemID: node.itemID, container: node.remoteContainer ?? node.container,
                remoteVersion: node.remoteVersion,
                sequence: state.allocateSequence())
            batch.tombstoneUpserts.append(tombstone!)
        }
        if var parent = state.nodes[node.parent] {
            let now = Timestamp.now()
            parent.modificationTime = now
            parent.changeTime = now
            batch.upserts.append(parent)
            try stage(batch, state: &state)
            state.nodes[parent.ino] = parent
        } else {
            try stage(batch, state: &state)
        }
        if let tombstone {
            state.tombstones[tombstone.itemID] = tombstone
            state.sync.recordFoldersChanged([node.parent], by: tombstone.itemID)
            state.sync.deleteFrees(.init(parent: node.parent, name: node.name), of: tombstone.itemID)
        }
        for reference in references {
            state.removeReference(at: reference.location)
            invalidator?.invalidateEntry(parent: reference.parent, name: reference.name)
        }
        state.detach(node.ino)
        state.metadataEpochs[node.ino] = nil
        if state.isReferenced(node.ino) {
            state.orphans[node.ino] = node
        } else if let file = node.contentFile {
            discardContent(file, state: &state)
        }
    }

    /// The kernel was handed `inos` once more each (readdirplus entries).
    public func rememberLookups(_ inos: [UInt64]) {
        state.withLock { state in
            for ino in inos { state.lookupCounts[ino, default: 0] += 1 }
        }
    }

    /// Whether a kernel holds `ino` (it was looked up and not forgotten since): only then can a program watch
    /// it with inotify.
    public func isKnownToKernel(_ ino: UInt64) -> Bool {
        state.withLock { ($0.lookupCounts[ino] ?? 0) > 0 }
    }

    /// The kernel forgot `count` references to `ino`; an unlinked node goes once nothing refers to it.
    public func forget(_ ino: UInt64, count: UInt64) {
        state.withLock { state in
            let remaining = (state.lookupCounts[ino] ?? 0) > count ? state.lookupCounts[ino]! - count : 0
            state.lookupCounts[ino] = remaining == 0 ? nil : remaining
            if remaining == 0, state.openCount(ino) == 0, let orphan = state.orphans.removeValue(forKey: ino) {
                if let file = orphan.contentFile { discardContent(file, state: &state) }
                state.pageCaches[ino] = nil
            }
        }
    }

    /// `ENOENT` for a name nobody has, or `ENAMETOOLONG` when no item could have it.
    private func missing(_ name: String) -> FolioError {
        do {
            try configuration.namePolicy.checkLength(name)
        } catch {
            return error
        }
        return .notFound(name)
    }

    /// Hard links are refused.
    public func link(_ ino: UInt64, newParent: UInt64, newName: String) throws(FolioError) -> Attributes {
        throw .notPermitted("hard links are not supported by Folio")
    }

    // MARK: Rename

    /// Renames or moves an item. Replacing a file with a file keeps the target's identity (an atomic save:
    /// one commit of the target, not a delete and a create); moving to another container moves the item there.
    /// A file renamed away from a name (in the same folder) is taken over by a file `context`'s process puts
    /// there moments later, and a file renamed to a name a document of the same process left moments ago takes
    /// that document over (editors' saves, see ``SaveTracker``).
    public func rename(
        parent: UInt64, name: String, newParent: UInt64, newName: String, flags: RenameFlags,
        context: RequestContext = .internalRequest
    ) throws(FolioError) {
        if flags.contains(.exchange) { throw .invalidArgument("RENAME_EXCHANGE is not supported") }
        try refuseVirtual(parent)
        try refuseVirtual(newParent)
        // Names whose kernel entries now lead elsewhere, in every mount: references to an item that an atomic
        // save moved to another inode.
        var moved: [ExternalReference] = []
        // The document's place, when a save through a reference put the source there (every kernel's entry of that
        // name now leads to another inode).
        var savedInPlace: (parent: UInt64, name: String)?
        try state.withLock { state throws(FolioError) in
            try loadStoredChildren(of: [parent, newParent], state: &state)
            if state.reference(parent, name) != nil {
                try moveReference(
                    from: .init(parent: parent, name: name), to: .init(parent: newParent, name: newName), flags: flags,
                    state: &state)
                return
            }
            guard let ino = state.child(parent, name), var source = state.nodes[ino] else {
                if let folder = virtualRootEntry(name, in: parent, state: &state) {
                    try refuseVirtual(folder)
                }
                throw missing(name)
            }
            guard let destinationDirectory = state.nodes[newParent] else { throw .notFound("folder \(newParent)") }
            guard destinationDirectory.kind == .directory else { throw .notDirectory(destinationDirectory.name) }
            if source.itemID.isContainerRoot { throw .notPermitted("containers cannot be renamed or moved") }
            if source.kind == .directory, state.isAncestor(ino, of: newParent) {
                throw .invalidArgument("cannot move a folder into itself")
            }
            if source.kind.isLocalOnly {
                try configuration.namePolicy.validateLocal(newName)
            } else {
                try configuration.namePolicy.validate(newName)
            }
            let departed = source
            let departedReferences = state.references(to: source.itemID).map(\.location)
            var replaced = false
            var batch = StoreBatch()
            let now = Timestamp.now()
            // Where the source ends: the new name, or the document a reference there opens (a save through it).
            var finalParent = newParent
            var finalName = newName
            var replacedIno = state.child(newParent, newName)
            if let referenced = state.reference(newParent, newName) {
                // Renaming an item over a reference to itself changes nothing (as for two links to one file).
                if referenced == source.itemID { return }
                if flags.contains(.noReplace) { throw .exists(newName) }
                if source.kind == .directory { throw .notDirectory(newName) }
                if source.kind == .file, source.state.hasLocalContent, let documentIno = state.byItemID[referenced],
                   let document = state.nodes[documentIno], document.kind == .file, document.parent != 0 {
                    // An atomic save through a reference (an app saving a granted document): the document is saved
                    // in place, where it is, and the reference stays (DESIGN.md §2 "References").
                    replacedIno = documentIno
                    finalParent = document.parent
                    finalName = document.name
                } else {
                    batch.referenceDeletes.append(.init(parent: newParent, name: newName))
                }
            }
            guard let finalDirectory = state.nodes[finalParent] else { throw .notFound("folder \(finalParent)") }
            if let targetIno = replacedIno {
                if targetIno == ino { return }
                if flags.contains(.noReplace) { throw .exists(newName) }
                guard let target = state.nodes[targetIno] else { throw .notFound(newName) }
                if target.itemID.isContainerRoot { throw .notPermitted("containers cannot be replaced") }
                replaced = true
                if target.kind == .directory {
                    guard source.kind == .directory else { throw .isDirectory(newName) }
                    try loadStoredChildren(of: targetIno, state: &state)
                    guard state.isEmptyFolder(targetIno) else { throw .notEmpty(newName) }
                } else if source.kind == .directory {
                    throw .notDirectory(newName)
                }
                if source.kind == .file, target.kind == .file, source.state.hasLocalContent {
                    // Atomic save: the source's content becomes a new version of the target's item. References
                    // to the target now lead to the source's inode; references to the source follow its
                    // content to the target's item.
                    moved = state.references(to: target.itemID)
                    for reference in state.references(to: source.itemID) {
                        batch.referenceUpserts.append(
                            ExternalReference(parent: reference.parent, name: reference.name, target: target.itemID))
                    }
                    if state.mayExistRemotely(source) {
                        let old = Tombstone(
                            itemID: source.itemID, container: source.remoteContainer ?? source.container,
                            remoteVersion: source.remoteVersion,
                            sequence: state.allocateSequence())
                        batch.tombstoneUpserts.append(old)
                        state.tombstones[old.itemID] = old
                        state.sync.recordFoldersChanged([source.parent], by: old.itemID)
                    }
                    state.byItemID[source.itemID] = nil
                    source.itemID = target.itemID
                    source.remoteVersion = target.remoteVersion
                    source.remoteContainer = target.remoteContainer
                    source.pinned = target.pinned
                    source.xattrs = target.xattrs.merging(source.xattrs) { _, new in new }
                    source.generation = max(source.generation, target.generation) + 1
                    try source.apply(.committed(generation: source.generation))
                    // Detach the target without a tombstone: its item lives on in `source`.
                    batch.deletes.append(targetIno)
                    state.detach(targetIno)
                    if state.isReferenced(targetIno) {
                        state.orphans[targetIno] = target
                    } else if let file = target.contentFile {
                        discardContent(file, state: &state)
                    }
                } else {
                    try remove(target, batch: &batch, state: &state)
                }
            }
            state.children[source.parent]?[source.name] = nil
            let oldParent = source.parent
            state.sync.recordFoldersChanged([oldParent, finalParent], by: source.itemID)
            source.parent = finalParent
            source.name = finalName
            source.changeTime = now
            source.metadataDirty = !source.kind.isLocalOnly
            source.dirtySequence = state.allocateSequence()
            if source.container != finalDirectory.container {
                try moveSubtree(ino, to: finalDirectory.container, batch: &batch, state: &state)
                source.container = finalDirectory.container
            }
            batch.upserts.append(source)
            for directoryIno in Set([oldParent, finalParent]) {
                guard var directory = state.nodes[directoryIno] else { continue }
                directory.modificationTime = now
                directory.changeTime = now
                batch.upserts.append(directory)
            }
            try stage(batch, state: &state)
            for location in batch.referenceDeletes { state.removeReference(at: location) }
            for reference in batch.referenceUpserts {
                state.removeReference(at: reference.location)
                state.insertReference(reference)
            }
            for directory in batch.upserts where directory.ino == oldParent || directory.ino == finalParent {
                state.nodes[directory.ino] = directory
            }
            state.nodes[ino] = source
            state.children[finalParent, default: [:]][finalName] = ino
            state.byItemID[source.itemID] = ino
            state.metadataEpochs[ino, default: 0] += 1
            if finalParent != newParent { savedInPlace = (finalParent, finalName) }
            // Only a rename in the folder can be part of a save: a file then put at the old name must not take
            // over (with its grants) a document moved elsewhere.
            if finalParent == parent {
                recordDeparture(
                    of: departed, references: departedReferences, processID: context.processID, state: &state)
            }
            if !replaced { moved += takeOver(by: ino, processID: context.processID, state: &state) }
        }
        for reference in moved { invalidator?.invalidateEntry(parent: reference.parent, name: reference.name) }
        if let savedInPlace {
            invalidator?.invalidateEntry(parent: savedInPlace.parent, name: savedInPlace.name)
            invalidator?.invalidateInode(savedInPlace.parent)
        }
        announce([.entry(parent, name), .entry(newParent, newName), .inode(parent), .inode(newParent)])
        notifyUploader()
    }

    /// Sets the container of every node below `ino` (a move across containers).
    private func moveSubtree(
        _ ino: UInt64, to container: ContainerID, batch: inout StoreBatch, state: inout State
    ) throws(FolioError) {
        for next in try subtree(of: ino, state: &state) where next != ino {
            guard var node = state.nodes[next] else { continue }
            node.container = container
            state.nodes[next] = node
            batch.upserts.append(node)
        }
    }

    // MARK: Listing

    /// Starts a listing of a folder: the entries are fixed at this moment so offsets stay stable.
    public func openDirectory(_ ino: UInt64) throws(FolioError) -> UInt64 {
        try state.withLock { state throws(FolioError) in
            if let folder = state.virtual.folders[ino] {
                let parent: UInt64 = switch folder {
                case .tag: state.virtual.ino(of: .tags)
                case .appRecents(let container): state.byItemID[.root(of: container)] ?? Self.rootIno
                case .recents, .tags: Self.rootIno
                }
                let entries = [ListedEntry(name: ".", ino: ino), ListedEntry(name: "..", ino: parent)]
                    + (try virtualListing(ino, state: &state))
                let handle = state.allocateHandle()
                state.directoryListings[handle] = entries
                return handle
            }
            try loadStoredChildren(of: ino, state: &state)
            guard let node = state.node(ino) else { throw .notFound("inode \(ino)") }
            guard node.kind == .directory else { throw .notDirectory(node.name) }
            let parent = node.parent == 0 ? ino : node.parent
            var entries = [ListedEntry(name: ".", ino: ino), ListedEntry(name: "..", ino: parent)]
            for (name, child) in state.children[ino] ?? [:] {
                entries.append(ListedEntry(name: name, ino: child))
            }
            for (name, target) in state.references[ino] ?? [:] {
                if let child = state.byItemID[target] { entries.append(ListedEntry(name: name, ino: child)) }
            }
            for folder in virtualFolders(at: ino, state: state) where !state.isTaken(ino, folder.name) {
                entries.append(ListedEntry(name: folder.name, ino: state.virtual.ino(of: folder)))
            }
            let handle = state.allocateHandle()
            state.directoryListings[handle] = entries
            return handle
        }
    }

    /// Entries of a listing from `offset` on, as many as `accept` takes. The offset of entry `i` is `i + 1`.
    public func readDirectory(
        _ handle: UInt64, offset: Int, limit: Int, accept: (DirectoryEntry, Int) -> Bool
    ) throws(FolioError) {
        let batch: [(DirectoryEntry, Int)] = try state.withLock { state throws(FolioError) in
            guard let entries = state.directoryListings[handle] else { throw .badHandle("directory \(handle)") }
            var result: [(DirectoryEntry, Int)] = []
            var index = offset
            while index < entries.count, result.count < max(limit, 1) {
                let entry = entries[index]
                index += 1
                var found: Attributes
                if let node = state.node(entry.ino) {
                    found = attributes(of: node, state: state)
                } else if let folder = virtualAttributes(entry.ino, state: state) {
                    found = folder
                } else {
                    continue
                }
                found.isVolatileEntry = entry.isVolatile
                result.append((DirectoryEntry(name: entry.name, attributes: found), index))
            }
            return result
        }
        for (entry, next) in batch where !accept(entry, next) {
            return
        }
    }

    /// Ends a listing.
    public func releaseDirectory(_ handle: UInt64) {
        _ = state.withLock { $0.directoryListings.removeValue(forKey: handle) }
    }

    /// Filesystem statistics (of the content cache's disk).
    public func statistics() -> FilesystemStatistics {
        var statistics = cache.statistics()
        statistics.maximumNameLength = UInt64(configuration.namePolicy.maximumLength)
        return statistics
    }
}
