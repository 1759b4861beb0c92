/// An external reference: a name in a folder that opens an item kept elsewhere, in place (DESIGN.md §2
/// "References"). Looking it up gives the item's own inode, so reads, writes, versions and attributes are the
/// original's; the reference follows the item through renames, moves and atomic saves because it names the
/// item's id, not a path. Removing the reference never removes the item; removing the item removes its
/// references. References are local to this machine (a grant), never uploaded.
public struct ExternalReference: Hashable, Sendable, Codable {
    /// The folder that holds the reference.
    public var parent: UInt64
    /// The reference's name in that folder.
    public var name: String
    /// The item it opens.
    public var target: ItemID

    /// Creates a reference.
    public init(parent: UInt64, name: String, target: ItemID) {
        self.parent = parent
        self.name = name
        self.target = target
    }

    /// Where the reference is: what identifies it in the store.
    public var location: Location { Location(parent: parent, name: name) }

    /// A folder and a name.
    public struct Location: Hashable, Sendable, Codable {
        /// The folder.
        public var parent: UInt64
        /// The name in it.
        public var name: String

        /// Creates a location.
        public init(parent: UInt64, name: String) {
            self.parent = parent
            self.name = name
        }
    }
}
