import Foundation

/// The live properties of a WebDAV resource that Folio reads (RFC 4918 §15), as a server reported them.
public struct WebDAVProperties: Sendable, Equatable {
    /// `resourcetype` holds `collection`: a folder.
    public var isCollection = false
    /// `getetag`, as sent (strong `"…"`, weak `W/"…"`, or unquoted as some servers send it).
    public var entityTag: String?
    /// `getcontentlength`, in bytes.
    public var contentLength: Int64?
    /// `getlastmodified` (an HTTP date).
    public var lastModified: Date?
    /// `getcontenttype`.
    public var contentType: String?
    /// `displayname`.
    public var displayName: String?
    /// A collection's `getctag` (Nextcloud, ownCloud, CalDAV servers): changes with anything below it.
    public var collectionTag: String?
    /// Folio's dead properties (namespace ``folioNamespace``) by local name: `id`, `mode`, `mtime`, `tag`,
    /// `symlink`.
    public var folio: [String: String] = [:]

    /// The XML namespace of the properties Folio keeps on the server.
    public static let folioNamespace = "urn:folio:properties:1"

    /// Creates properties (all absent by default).
    public init(
        isCollection: Bool = false, entityTag: String? = nil, contentLength: Int64? = nil, lastModified: Date? = nil,
        contentType: String? = nil, displayName: String? = nil
    ) {
        self.isCollection = isCollection
        self.entityTag = entityTag
        self.contentLength = contentLength
        self.lastModified = lastModified
        self.contentType = contentType
        self.displayName = displayName
    }

    /// An HTTP date (RFC 9110 §5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms), or `nil`.
    public static func httpDate(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) { return date }
        }
        return nil
    }
}
