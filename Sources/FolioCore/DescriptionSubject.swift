/// What the describer needs to know of one node, read in one take of the core's lock for a whole batch
/// (``FolioFileSystem/descriptionSubjects(_:)``): a folder listed for the first time brings a thousand of them.
public enum DescriptionSubject: Sendable, Equatable {
    /// A folder, at its place (its parent's inode and its name): a change of place moves what is below it.
    case folder(place: String)
    /// A file whose current version has a description.
    case described(ContentDescription)
    /// A file whose current version's content is here and has no description yet: described here.
    case describable
    /// A file known only by its provider version (a placeholder) with no description: asked of the provider.
    case placeholder(PlaceholderToDescribe)
    /// Anything else: a symlink, a file with a local change waiting for its upload, a file never uploaded.
    case other
}

/// A placeholder whose description is asked of the provider.
public struct PlaceholderToDescribe: Sendable, Equatable {
    /// The node.
    public var ino: UInt64
    /// Its item on the provider.
    public var id: ItemID
    /// The container the provider holds it in.
    public var container: ContainerID
    /// The provider version a description must be of.
    public var version: String
    /// Its name (what it says of the type, when the provider has nothing).
    public var name: String
}
