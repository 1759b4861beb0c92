import FolioCore
import SystemPackage

/// The local remote's tree and everything the provider knows about it: one id index per container and the
/// symlink ids. All of it is synchronous file system work, done under the provider's lock (never across an
/// `await`), so each check-then-act below is atomic with respect to the provider's other calls.
///
/// Identity: files and folders carry their id in the `user.folio.id` xattr, which renames and moves keep;
/// symlinks are identified through ``SymlinkIDStore``. Objects found without an id (copied into the remote by
/// hand) get one on the next scan; a copy that brought another item's id along (`cp -a`) gets a new one.
struct RemoteTree: Sendable {
    /// Where things live.
    let layout: RemoteLayout
    /// Id indexes of the containers scanned so far.
    var indexes: [ContainerID: ContainerIndex] = [:]
    /// Ids of symlinks.
    var symlinkIDs: SymlinkIDStore
    /// Called by a scan right after it listed a folder, with the folder's path: tests make someone else's
    /// rename race with the walk through it.
    var folderListed: (@Sendable (FilePath) -> Void)?

    /// A tree over the remote at `layout`; containers are scanned when first used.
    init(layout: RemoteLayout) throws {
        self.layout = layout
        symlinkIDs = try SymlinkIDStore(path: layout.symlinkIndex)
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

    /// Finds an item by id: checks the index entry against the disk and, when it is missing or stale, rescans
    /// the container (unless `rescanOnMiss` is false). `nil` if the container has no such item.
    mutating func locate(_ id: ItemID, in container: ContainerID, rescanOnMiss: Bool = true) throws -> LocatedItem? {
        try symlinkIDs.reloadIfChanged()
        if indexes[container] == nil {
            _ = try scan(container)
            return try locateIndexed(id, in: container)
        }
        if let found = try locateIndexed(id, in: container) { return found }
        guard rescanOnMiss else { return nil }
        _ = try scan(container)
        return try locateIndexed(id, in: container)
    }

    /// The item the index places at `id`, if it is really there.
    func locateIndexed(_ id: ItemID, in container: ContainerID) throws -> LocatedItem? {
        guard let index = indexes[container], let place = index.places[id],
            let components = index.components(of: id)
        else { return nil }
        var path = try containerDirectory(container)
        for component in components { path.append(component) }
        guard let status = try SystemCalls.statusIfPresent(path), let kind = status.kind,
            try identity(at: path, status: status) == id
        else { return nil }
        return LocatedItem(
            id: id, container: container, parentID: place.parentID, name: place.name, path: path, status: status,
            symlinkTarget: kind == .symlink ? try SystemCalls.symlinkTarget(path) : nil
        )
    }

    /// The id of the object at `path`: its stored id, or for a file or folder whose id could not be stored, one
    /// derived from its inode. `nil` for a symlink without a recorded id.
    func identity(at path: FilePath, status: FileStatus) throws -> ItemID? {
        switch status.kind {
        case .symlink:
            return symlinkIDs.id(of: status, target: try SystemCalls.symlinkTarget(path))
        case .file, .directory:
            if let stored = try SystemCalls.extendedAttribute(ItemAttributes.id, of: path), !stored.isEmpty {
                return ItemID(stored)
            }
            return Self.derivedID(of: status)
        default:
            return nil
        }
    }

    /// The id of a file or folder that cannot carry an xattr (not ours to change): stable while its inode is.
    static func derivedID(of status: FileStatus) -> ItemID { ItemID("inode-\(status.device)-\(status.inode)") }

    // MARK: Describing items

    /// The provider's description of an item found on disk.
    func remoteItem(for item: LocatedItem) throws -> RemoteItem {
        let kind = item.kind
        let revision = kind == .symlink ? 0 : try Self.revision(at: item.path)
        return RemoteItem(
            id: item.id, container: item.container, parentID: item.parentID, name: item.name, kind: kind,
            size: kind == .file ? item.status.size : 0, modificationTime: item.status.modificationTime,
            mode: kind == .symlink ? 0o777 : try Self.reportedMode(at: item.path, status: item.status),
            symlinkTarget: item.symlinkTarget,
            version: ItemAttributes.version(kind: kind, revision: revision, status: item.status)
        )
    }

    /// The revision counter of a file or folder (0 if it never changed through the provider).
    static func revision(at path: FilePath) throws -> UInt64 {
        try SystemCalls.extendedAttribute(ItemAttributes.revision, of: path).flatMap { UInt64($0) } ?? 0
    }

    /// The permission bits of an item: the bits asked for if the disk still holds them (plus the owner bits the
    /// provider keeps), otherwise the bits on disk (someone changed them by hand).
    static func reportedMode(at path: FilePath, status: FileStatus) throws -> UInt32 {
        guard let kind = status.kind,
            let stored = try SystemCalls.extendedAttribute(ItemAttributes.mode, of: path),
            let requested = UInt32(stored, radix: 8),
            status.permissions == requested | ItemAttributes.ownerBits(for: kind)
        else { return status.permissions }
        return requested
    }

    /// Sets the permission bits of a file or folder: on disk with the owner bits the provider needs, and the
    /// requested bits in an xattr when they differ.
    static func applyMode(_ mode: UInt32, kind: ItemKind, to path: FilePath) throws {
        let requested = mode & 0o7777
        let onDisk = requested | ItemAttributes.ownerBits(for: kind)
        try SystemCalls.setPermissions(path, onDisk)
        if onDisk == requested {
            try SystemCalls.removeExtendedAttribute(ItemAttributes.mode, of: path)
        } else {
            try SystemCalls.setExtendedAttribute(ItemAttributes.mode, String(requested, radix: 8), of: path)
        }
    }
}
