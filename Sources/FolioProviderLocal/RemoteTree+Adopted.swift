import FolioCore
import SystemPackage

/// Identity and attributes in an adopted folder (``RemoteLayout/isAdopted``), where nothing is written on the
/// user's items: what a remote Folio made keeps in the `user.folio` attribute of each item is kept in the
/// ``ItemIDMap`` instead, and an item without an entry has the id derived from its inode.
///
/// Hard links: two names of one inode must not be one item twice. In an adopted folder a file with more than
/// one name gets an id of its own per name (derived from the inode and its path in the container, see
/// ``hardLinkID(of:components:)``); renaming such a name gives it a new id (the client then sees the old one
/// go and a new one come at the new name). Its entry in the map, if it had one, is not used while it has several
/// names.
extension RemoteTree {
    /// Whether the tree is an adopted folder.
    var isAdopted: Bool { layout.isAdopted }

    /// Whether the map may speak for an object with this status (not for a file with several names).
    private static func mapApplies(to status: FileStatus) -> Bool {
        !(status.kind == .file && status.linkCount > 1)
    }

    /// The attributes of the file or folder at `path` with `status`: its `user.folio` attribute, or in an
    /// adopted folder its entry in the id map (none: empty).
    func storedAttributes(at path: FilePath, status: FileStatus) throws -> StoredAttributes {
        guard isAdopted else { return try StoredAttributes.read(path) }
        guard Self.mapApplies(to: status) else { return StoredAttributes() }
        return itemIDs?.attributes(of: status) ?? StoredAttributes()
    }

    /// The attributes of an open file with `status` (see ``storedAttributes(at:status:)``).
    func storedAttributes(of descriptor: FileDescriptor, path: FilePath, status: FileStatus) throws
        -> StoredAttributes
    {
        guard isAdopted else { return try StoredAttributes.read(descriptor, path: path) }
        return try storedAttributes(at: path, status: status)
    }

    /// Keeps the attributes of the file or folder at `path` with `status`: in its `user.folio` attribute, or in
    /// an adopted folder in the id map (saved before the remote's lock is let go).
    mutating func store(_ attributes: StoredAttributes, at path: FilePath, status: FileStatus) throws {
        guard isAdopted else { return try attributes.write(to: path) }
        itemIDs?.record(attributes, for: status)
    }

    /// Forgets the map entry of an object deleted or replaced through Folio (nothing outside an adopted folder).
    mutating func forgetAttributes(of status: FileStatus) {
        itemIDs?.forget(status)
    }

    /// Saves the changes to the id map (at the end of each hold of the tree's lock).
    mutating func saveItemIDs() throws {
        guard itemIDs?.hasUnsavedChanges == true else { return }
        try itemIDs?.save()
    }

    /// The id of the file or folder with `status` and `attributes` at `components` below its container: the id
    /// it carries (or has in the map), else the one derived from its inode; in an adopted folder a file with
    /// several names gets ``hardLinkID(of:components:)``.
    func fileOrFolderID(attributes: StoredAttributes?, status: FileStatus, components: [String]) -> ItemID {
        if isAdopted, !Self.mapApplies(to: status) { return Self.hardLinkID(of: status, components: components) }
        return attributes?.id ?? Self.derivedID(of: status)
    }

    /// The id of one name of a hard-linked file in an adopted folder: made from its inode and its path in the
    /// container, so each name is an item of its own and keeps its id while it keeps its name.
    static func hardLinkID(of status: FileStatus, components: [String]) -> ItemID {
        let hash = StableHash.fnv1a(components.joined(separator: "/"))
        return ItemID("link-\(status.device)-\(status.inode)-\(String(hash, radix: 16))")
    }

    /// The id of a symlink found with `status` and `target`: the one recorded for it, or in an adopted folder
    /// (where nothing is recorded for the user's own symlinks) the one derived from its inode.
    func symlinkID(of status: FileStatus, target: String) -> ItemID? {
        symlinkIDs.id(of: status, target: target) ?? (isAdopted ? Self.derivedID(of: status) : nil)
    }

    /// The path components of `path` below the directory of `container` (what ``hardLinkID(of:components:)``
    /// is made from).
    func components(of path: FilePath, in container: ContainerID) -> [String] {
        var relative = path
        guard relative.removePrefix(layout.directory(of: container)) else { return [] }
        return relative.components.map(\.string)
    }
}
