/// An opaque position in a paged folder listing (see ``Provider/enumerateFolder(_:in:from:pageSize:)``).
public struct PageCursor: Hashable, Sendable, Codable {
    /// The provider's encoding of the position.
    public var rawValue: String
    /// Wraps a provider's cursor.
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// One page of a folder's children.
public struct FolderPage: Sendable {
    /// The children on this page.
    public var items: [RemoteItem]
    /// The cursor of the next page, or `nil` if this is the last one.
    public var next: PageCursor?

    /// Creates a page.
    public init(items: [RemoteItem], next: PageCursor?) {
        self.items = items
        self.next = next
    }
}
