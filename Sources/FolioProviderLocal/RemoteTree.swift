import FolioCore
import SystemPackage

/// The local remote's tree and everything the provider knows about it: one id index per container and the
/// symlink ids. All of it is synchronous file system work, done under the provider's lock (never across an
/// `await`), so each check-then-act below is atomic with respect to the provider's other calls.
///
/// Identity: files and folders carry their id in the `user.folio` xattr, which renames and moves keep;
/// symlinks are identified through ``SymlinkIDStore``. Objects found without an id (copied into the remote by
/// hand) get one on the next scan; a copy that brought another item's id along (`cp -a`) gets a new one.
struct RemoteTree: Sendable {
    /// Where things live.
    let layout: RemoteLayout
    /// Id indexes of the containers scanned so far.
    var indexes: [ContainerID: ContainerIndex] = [:]
    /// Which items have a tags file (a listing looks at each spread folder once, not at each item's file).
    let tagFiles = SpreadFolderIndex(keeping: ".json")
    /// Ids of symlinks.
    var symlinkIDs: SymlinkIDStore
    /// In an adopted folder, what the provider knows of files and folders (``ItemIDMap``); `nil` otherwise.
    var itemIDs: ItemIDMap?
    /// Items whose new file a create is putting into place outside the lock (between
    /// ``planCreate(_:staged:folders:)`` and ``finishPlacing(_:)``): another create of one of them waits.
    var placing: Set<ItemID> = []
    /// Called by a scan right after it listed a folder, with the folder's path: tests make someone else's
    /// rename race with the walk through it.
    var folderListed: (@Sendable (FilePath) -> Void)?
    /// The watchers of the providers of this process on this remote: every folder listed is watched by each of
    /// them before it is read (``watchBeforeListing(_:)``).
    var watchers: [WatcherReference] = []
    /// The change journal of each container used so far (``ChangeJournal``).
    var journals: [ContainerID: ChangeJournal] = [:]
    /// Records of changes made or found under the current hold of the lock, appended when it ends
    /// (``flushJournal()``).
    var pendingRecords: [ContainerID: [JournalRecord]] = [:]
    /// The size past which a journal drops its oldest records.
    var journalLimit = ChangeJournal.defaultLimit
    /// How many listed folders each ``LocalProvider/changes(in:since:)`` lists again to find changes made by hand
    /// when no watcher runs (the sweep, round robin).
    var sweepFoldersPerCall = 16
    /// When the slow sweep last ran in each container (seconds; see ``slowSweepIsDue(in:)``).
    var lastSlowSweep: [ContainerID: Int64] = [:]
    /// How often the slow sweep lists one folder while a watcher runs.
    var slowSweepSeconds: Int64 = 1
    /// The most records one ``LocalProvider/changes(in:since:)`` answers with (``RemoteChanges/moreComing``).
    var changesPerCall = 1000

    /// A tree over the remote at `layout`; containers are scanned when first used.
    init(layout: RemoteLayout) throws {
        self.layout = layout
        symlinkIDs = try SymlinkIDStore(path: layout.symlinkIndex)
        itemIDs = layout.isAdopted ? try ItemIDMap(path: layout.itemIDIndex) : nil
    }

    // MARK: Containers

    /// The directory of a container; `.notFound` if the remote has no such container.
    func containerDirectory(_ container: ContainerID) throws -> FilePath {
        try ItemName.validateContainerID(container)
        let path = layout.directory(of: container)
        guard try SystemCalls.statusIfPresent(path)?.kind == .directory else {
            throw FolioError.notFound("container \(container) in remote \(layout.root)")
        }
        return path
    }

    /// The directory that `parentID` names in `container` (its root for `nil` or the root id), with the parent
    /// id as it should be recorded (`nil` for the root).
    mutating func directory(
        for parentID: ItemID?, in container: ContainerID
    ) throws -> (path: FilePath, parentID: ItemID?) {
        let base = try containerDirectory(container)
        guard let parentID, parentID != ItemID.root(of: container) else { return (base, nil) }
        if parentID.isContainerRoot {
            throw FolioError.invalidArgument("\(parentID) is the root of another container than \(container)")
        }
        guard let parent = try locate(parentID, in: container) else {
            throw FolioError.notFound("parent folder \(parentID) in \(container)")
        }
        guard parent.kind == .directory else { throw FolioError.notDirectory("\(parent.name) (\(parentID))") }
        return (parent.path, parentID)
    }

    // MARK: Finding items

    /// Finds an item by id: checks the index entry against the disk and, when it is missing or stale, looks for
    /// it folder by folder (``search(_:in:)``: up to the whole container, stopping where it is found), unless
    /// `rescanOnMiss` is false and the whole container was walked in this process already (then the index has
    /// every item this process made or met). `nil` if the container has no such item.
    mutating func locate(_ id: ItemID, in container: ContainerID, rescanOnMiss: Bool = true) throws -> LocatedItem? {
        try symlinkIDs.reloadIfChanged()
        try itemIDs?.reloadIfChanged()
        if let found = try locateIndexed(id, in: container) { return found }
        guard rescanOnMiss || !(indexes[container]?.isComplete ?? false) else { return nil }
        return try search(id, in: container)
    }

    /// The item the index places at `id`, if it is really there.
    func locateIndexed(_ id: ItemID, in container: ContainerID) throws -> LocatedItem? {
        guard let index = indexes[container], let place = index.places[id],
            let components = index.components(of: id)
        else { return nil }
        var path = try containerDirectory(container)
        for component in components { path.append(component) }
        guard let status = try SystemCalls.statusIfPresent(path), let kind = status.kind else { return nil }
        var attributes: StoredAttributes?
        if kind == .file || kind == .directory {
            attributes = try storedAttributes(at: path, status: status)
            guard fileOrFolderID(attributes: attributes, status: status, components: components) == id else {
                return nil
            }
        } else if try identity(at: path, status: status) != id {
            return nil
        }
        return LocatedItem(
            id: id, container: container, parentID: place.parentID, name: place.name, path: path, status: status,
            symlinkTarget: kind == .symlink ? try SystemCalls.symlinkTarget(path) : nil, attributes: attributes
        )
    }

    /// The id of the object at `path`: its stored id, or for a file or folder whose id could not be stored, one
    /// derived from its inode. `nil` for a symlink without a recorded id.
    func identity(at path: FilePath, status: FileStatus) throws -> ItemID? {
        switch status.kind {
        case .symlink:
            return symlinkID(of: status, target: try SystemCalls.symlinkTarget(path))
        case .file, .directory:
            return try storedAttributes(at: path, status: status).id ?? Self.derivedID(of: status)
        default:
            return nil
        }
    }

    /// The id of a file or folder that cannot carry an xattr (not ours to change): stable while its inode is.
    static func derivedID(of status: FileStatus) -> ItemID { ItemID("inode-\(status.device)-\(status.inode)") }

    // MARK: Describing items

    /// The provider's description of an item found on disk.
    func remoteItem(for item: LocatedItem, readingTags: Bool = true) throws -> RemoteItem {
        let kind = item.kind
        let attributes =
            kind == .symlink
            ? StoredAttributes() : try item.attributes ?? storedAttributes(at: item.path, status: item.status)
        return RemoteItem(
            id: item.id, container: item.container, parentID: item.parentID, name: item.name, kind: kind,
            size: kind == .file ? item.status.size : 0, modificationTime: item.status.modificationTime,
            mode: kind == .symlink ? 0o777 : Self.reportedMode(attributes.mode, status: item.status),
            symlinkTarget: item.symlinkTarget,
            version: ItemAttributes.version(kind: kind, revision: attributes.revision, status: item.status),
            tags: kind == .symlink ? nil : readingTags ? layout.storedTags(of: item.id) : []
        )
    }

    /// The permission bits of an item: the bits asked for (`stored`) if the disk still holds them (plus the owner
    /// bits the provider keeps), otherwise the bits on disk (someone changed them by hand).
    static func reportedMode(_ stored: UInt32?, status: FileStatus) -> UInt32 {
        guard let kind = status.kind, let stored, status.permissions == stored | ItemAttributes.ownerBits(for: kind)
        else { return status.permissions }
        return stored
    }

    /// The bits to set on disk for `mode` (with the owner bits the provider needs), and the bits to store when
    /// they differ from those.
    static func diskMode(_ mode: UInt32, kind: ItemKind) -> (onDisk: UInt32, stored: UInt32?) {
        let requested = mode & 0o7777
        let onDisk = requested | ItemAttributes.ownerBits(for: kind)
        return (onDisk, onDisk == requested ? nil : requested)
    }

    /// Sets the permission bits of the file or folder `id` at `path`: on disk with the owner bits the provider
    /// needs, and the requested bits in its attributes when they differ.
    mutating func applyMode(_ mode: UInt32, kind: ItemKind, to path: FilePath, id: ItemID) throws {
        let (onDisk, stored) = Self.diskMode(mode, kind: kind)
        try SystemCalls.setPermissions(path, onDisk)
        let status = try SystemCalls.status(path)
        var attributes = try storedAttributes(at: path, status: status)
        guard attributes.mode != stored else { return }
        attributes.mode = stored
        attributes.id = attributes.id ?? id  // never written without the id it is known by
        try store(attributes, at: path, status: status)
    }
}
