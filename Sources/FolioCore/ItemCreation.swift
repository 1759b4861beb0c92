import SystemPackage

/// One create of a ``Provider/createItems(_:)`` call: what ``Provider/createItem(_:contents:)`` takes.
public struct ItemCreation: Sendable {
    /// The item to create.
    public var template: RemoteItemTemplate
    /// The file's content (`nil`: empty, or not a file).
    public var contents: FilePath?

    /// A create of `template` with `contents`.
    public init(_ template: RemoteItemTemplate, contents: FilePath?) {
        self.template = template
        self.contents = contents
    }
}
