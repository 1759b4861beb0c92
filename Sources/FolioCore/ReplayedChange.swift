/// A change the remote made to the tree, as a mount replays it through itself.
///
/// The kernel emits inotify events only for operations that pass through a mount; cache invalidations emit
/// none. So after the core has applied a remote change, each mount performs the matching operation on itself
/// (through a helper process, answered by the adapter without touching the core), and file managers, editors
/// and `inotifywait` watching the mount see the change like a local one.
public enum ReplayedChange: Sendable, Hashable {
    /// An item of `kind` appeared as `name` in folder `parent`.
    case created(parent: UInt64, name: String, kind: ItemKind)
    /// The item `attributes.ino` was deleted from folder `parent`, where it was `name`.
    case removed(parent: UInt64, name: String, attributes: Attributes)
    /// The item `ino` moved from `fromName` in `fromParent` to `toName` in `toParent`.
    case moved(ino: UInt64, fromParent: UInt64, fromName: String, toParent: UInt64, toName: String)
    /// The item `ino` changed: its content (`content`: it is now a placeholder of the new version) or only its
    /// attributes (mode, modification time).
    case changed(ino: UInt64, content: Bool)
}
