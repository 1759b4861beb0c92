/// The id of a container, like `com.example.notes`.
public struct ContainerID: Hashable, Sendable, Codable, CustomStringConvertible, RawRepresentable, Comparable {
    /// The id's text form.
    public let rawValue: String

    /// Wraps an id.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps an id.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The shared Drive container, always public; its documents form the root of the full view.
    public static let drive = ContainerID("com.folio.drive")

    public var description: String { rawValue }

    public static func < (lhs: ContainerID, rhs: ContainerID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A container: one app's documents (or the shared Drive), with a display name and a visibility.
public struct Container: Hashable, Sendable, Codable {
    /// The container's id.
    public var id: ContainerID
    /// The name shown for the container's folder in the full view.
    public var displayName: String
    /// Public containers appear in the full view; private ones only in their own app view.
    public var isPublic: Bool

    /// Creates a container description.
    public init(id: ContainerID, displayName: String, isPublic: Bool) {
        self.id = id
        self.displayName = displayName
        self.isPublic = isPublic
    }

    /// The Drive container.
    public static let drive = Container(id: .drive, displayName: "Drive", isPublic: true)
}
