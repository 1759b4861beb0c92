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

    /// `raw` as the id of a container to create: reverse-DNS like `com.example.notes` (ASCII letters, digits,
    /// `-` and `_` between dots; at least one dot; at most 200 characters), so every provider can name a folder
    /// or collection after it and tell it from a document. Anything else is `.invalidArgument`, saying why.
    public static func forNewContainer(_ raw: String) throws(FolioError) -> ContainerID {
        let parts = raw.split(separator: ".", omittingEmptySubsequences: false)
        let allowed = parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        }
        guard raw.count <= 200, parts.count >= 2, allowed else {
            throw .invalidArgument(
                "\"\(raw)\" is not a container id: use reverse-DNS names like com.example.notes (ASCII letters, "
                    + "digits, - and _ between dots, at least one dot, at most 200 characters)")
        }
        return ContainerID(raw)
    }
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
