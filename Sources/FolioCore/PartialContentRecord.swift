import Foundation

/// What is here of a version being downloaded by ranges: the sidecar the content cache keeps beside the version
/// file being filled (``ContentCache/writePartialRecord(_:)``), so a restarted daemon serves only bytes that were
/// fetched. It is written only after the bytes it names are durable in the version file, and removed once the
/// version is complete (the item's row then names the file) or given up.
public struct PartialContentRecord: Sendable, Hashable, Codable {
    /// The item's container.
    public var container: ContainerID
    /// The item.
    public var itemID: ItemID
    /// The provider version the bytes belong to.
    public var version: String
    /// The version's size (the version file has this length from the start).
    public var size: Int64
    /// The version file being filled, in the content cache.
    public var file: String
    /// The bytes of ``file`` that were fetched and are durable.
    public var present: ByteRanges

    /// A record.
    public init(
        container: ContainerID, itemID: ItemID, version: String, size: Int64, file: String, present: ByteRanges
    ) {
        self.container = container
        self.itemID = itemID
        self.version = version
        self.size = size
        self.file = file
        self.present = present
    }

    /// The suffix of sidecar names.
    public static let suffix = ".ranges"

    /// The sidecar's name for one version of one item: found again from the item alone after a restart.
    public static func name(container: ContainerID, itemID: ItemID, version: String) -> String {
        let hash = StableHash.fnv1a(container.rawValue + "\u{0}" + itemID.rawValue + "\u{0}" + version)
        return "r" + String(hash, radix: 16) + suffix
    }

    /// This record's sidecar name.
    public var name: String { Self.name(container: container, itemID: itemID, version: version) }
}
