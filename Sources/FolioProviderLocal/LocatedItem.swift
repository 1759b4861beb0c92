import FolioCore
import SystemPackage

/// An item found on disk: its identity, place and status at the moment it was found.
struct LocatedItem: Sendable {
    /// The item id.
    var id: ItemID
    /// The container it is in.
    var container: ContainerID
    /// Its parent folder, or `nil` for the container's root.
    var parentID: ItemID?
    /// Its name.
    var name: String
    /// Its absolute path.
    var path: FilePath
    /// Its status (never of a kind the provider cannot store).
    var status: FileStatus
    /// The target, for a symlink.
    var symlinkTarget: String?
    /// Its attributes as they were read when it was found (`nil`: not read).
    var attributes: StoredAttributes?

    /// The item's kind.
    var kind: ItemKind { status.kind ?? .file }
}
