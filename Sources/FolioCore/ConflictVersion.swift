/// A version of an item kept because it conflicted with the current one (DESIGN.md §2 "Remote changes"): the
/// remote's content when it changed while the local version was not uploaded yet. Nothing is dropped until the
/// user resolves the conflict (`folio versions resolve`).
public struct ConflictVersion: Hashable, Sendable, Codable {
    /// The item it belongs to.
    public var itemID: ItemID
    /// The provider's version string of this content.
    public var remoteVersion: String
    /// Its size in bytes.
    public var size: Int64
    /// Its modification time on the remote.
    public var modificationTime: Timestamp
    /// Its content in the content cache.
    public var contentFile: String

    /// Creates a conflict version.
    public init(itemID: ItemID, remoteVersion: String, size: Int64, modificationTime: Timestamp, contentFile: String) {
        self.itemID = itemID
        self.remoteVersion = remoteVersion
        self.size = size
        self.modificationTime = modificationTime
        self.contentFile = contentFile
    }
}

/// How a conflict is resolved.
public enum ConflictResolution: String, Sendable, Codable, CaseIterable {
    /// The local version stays current and is uploaded over the remote one; the conflict versions go.
    case local
    /// The remote version becomes current; the local one goes.
    case remote
    /// The local version stays current (and is uploaded); each conflict version becomes a sibling file.
    case both
}
