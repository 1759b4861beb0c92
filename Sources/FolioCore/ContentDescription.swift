/// What Folio learned from one version of a file's content while the content was here: its type and whether it
/// has thumbnails (File Provider's thumbnails and content type). The provider keeps it with the item, for that
/// version, so that another device shows the type and the thumbnails of a placeholder without its content.
public struct ContentDescription: Hashable, Sendable, Codable {
    /// The provider version of the content described. A description of another version than the item's
    /// current one describes nothing (the content changed since).
    public var version: String
    /// The shared-mime-info type (`image/png`), decided from the name and the content; `nil` if none fits.
    public var contentType: String?
    /// What became of the thumbnails of this version.
    public var thumbnails: ThumbnailOutcome

    /// Creates a description.
    public init(version: String, contentType: String?, thumbnails: ThumbnailOutcome) {
        self.version = version
        self.contentType = contentType
        self.thumbnails = thumbnails
    }
}

/// What became of the thumbnails of one version of a document.
public enum ThumbnailOutcome: String, Hashable, Sendable, Codable {
    /// Made, one per ``ThumbnailSize``, and kept by the provider.
    case made
    /// A thumbnailer for the type ran and failed (or ran out of time or memory): nobody should try again on
    /// this version (the freedesktop cache's `fail/` entry).
    case failed
    /// No thumbnailer on the machine that described it handles the type.
    case none
}

/// The sizes of the Thumbnail Managing Standard that Folio makes (the largest side, in pixels).
public enum ThumbnailSize: String, CaseIterable, Hashable, Sendable, Codable {
    /// 128 pixels: `$XDG_CACHE_HOME/thumbnails/normal/`.
    case normal
    /// 256 pixels: `$XDG_CACHE_HOME/thumbnails/large/`.
    case large

    /// The largest side in pixels.
    public var pixels: Int {
        switch self {
        case .normal: 128
        case .large: 256
        }
    }
}
