import FolioCore
import FolioFUSE

/// How the replay answers its helper's requests: as if the change being replayed had not happened yet, so the
/// operation the helper asks for succeeds in the kernel and fires its inotify events, while nothing reaches the
/// core (the change is already there) or the provider. With no change in progress the script is empty: lookups
/// are answered as usual and every change is refused.
struct ReplayScript: Sendable {
    /// A name in a folder (core inodes).
    typealias Name = FUSERequest.Name

    /// The file handle of an open made by a replay (never a core handle).
    static let handle = UInt64.max

    /// Names the change creates or moves an item to: lookups do not find them, creates answer with the item.
    var absent: Set<Name> = []
    /// Names the change removes or moves an item away from: lookups find the item, with these attributes.
    var present: [Name: Attributes] = [:]
}
