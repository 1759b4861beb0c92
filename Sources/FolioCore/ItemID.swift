import Foundation

/// The stable identity of an item, the same on this machine and on the provider.
///
/// Items created here get a fresh random id before they are uploaded, so a create that is retried after a
/// crash can be recognized by the provider instead of being duplicated.
public struct ItemID: Hashable, Sendable, Codable, CustomStringConvertible, RawRepresentable {
    /// The id's text form.
    public let rawValue: String

    /// Wraps an existing id.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps an existing id.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// A new random id.
    public static func generate() -> ItemID { ItemID(UUID().uuidString.lowercased()) }

    /// The id of a container's root folder.
    public static func root(of container: ContainerID) -> ItemID { ItemID("root:" + container.rawValue) }

    /// Whether this is the id of a container's root folder.
    public var isContainerRoot: Bool { rawValue.hasPrefix("root:") }

    public var description: String { rawValue }
}
