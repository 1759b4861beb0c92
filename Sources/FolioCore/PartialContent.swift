/// Some bytes of a placeholder's version, kept in the content cache after the download that fetched them ended
/// with nobody reading or waiting (File Provider's partial contents): the node is then `partial`, and the next
/// download of the same version starts from these bytes instead of fetching them again. The core owns them until a
/// download claims them (``FolioFileSystem/claimPartialContent(_:version:)``); they go with an eviction, a new
/// version, or the item.
public struct PartialContent: Sendable, Hashable {
    /// The provider version the bytes belong to.
    public var version: String
    /// The sidecar that names the bytes (``PartialContentRecord``).
    public var recordName: String
    /// The version file holding them.
    public var file: String
    /// How many bytes are here.
    public var present: Int64
    /// The version's size.
    public var size: Int64

    /// Kept bytes described by `record`.
    public init(_ record: PartialContentRecord) {
        version = record.version
        recordName = record.name
        file = record.file
        present = record.present.count
        size = record.size
    }
}
