import Foundation
import Synchronization

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
    /// The write locks `lockdiscovery` lists (`activelock`): their owners (as text) and tokens.
    public var activeLocks: [ActiveLock] = []
    /// Folio's dead properties (namespace ``folioNamespace``) by local name: `id`, `mode`, `mtime`, `tag`,
    /// `symlink`.
    public var folio: [String: String] = [:]

    /// Whether the resource is only a lock on a name nothing is at yet (RFC 2518's lock-null resource, what Apache
    /// makes for the `LOCK` of an unmapped URL): no collection, and none of a file's ETag, length and date.
    public var isLockNull: Bool {
        !isCollection && entityTag == nil && contentLength == nil && lastModified == nil
    }

    /// A lock `lockdiscovery` lists: the text of its `owner` and its token (`locktoken`'s `href`).
    public struct ActiveLock: Sendable, Equatable {
        /// The text of the lock's `owner` element.
        public var owner: String
        /// The lock's token (`opaquelocktoken:…`).
        public var token: String
    }

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

    /// An HTTP date (RFC 9110 §5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms), or `nil`. The
    /// usual form is read by hand (a listing of 10,000 files has 10,000 of them: a date formatter each would cost
    /// seconds); the obsolete ones through formatters made once.
    public static func httpDate(_ text: String) -> Date? {
        // Read from a listing, the text comes trimmed: only other text pays for `trimmingCharacters`.
        if let date = fixedLengthIMFdate(text) { return date }
        let padded = (text.first?.isWhitespace ?? false) || (text.last?.isWhitespace ?? false)
        let trimmed = padded ? text.trimmingCharacters(in: .whitespacesAndNewlines) : text
        if let date = imfFixdate(trimmed) { return date }
        return obsoleteFormatters.withLock { formatters in
            formatters.lazy.compactMap { $0.date(from: trimmed) }.first
        }
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` exactly as RFC 9110 writes it (29 bytes, two-digit fields), read from its
    /// bytes; `nil` for anything else (``imfFixdate(_:)`` then reads it).
    static func fixedLengthIMFdate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20,
                bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"),
                bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20, bytes[26] == UInt8(ascii: "G"),
                bytes[27] == UInt8(ascii: "M"), bytes[28] == UInt8(ascii: "T")
            else { return nil }
            func number(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for index in start..<(start + count) {
                    let digit = Int(bytes[index]) - 48
                    guard (0...9).contains(digit) else { return nil }
                    value = value * 10 + digit
                }
                return value
            }
            let monthName = (Int(bytes[8]) << 16) | (Int(bytes[9]) << 8) | Int(bytes[10])
            guard let day = number(5, 2), let year = number(12, 4), let hour = number(17, 2),
                let minute = number(20, 2), let second = number(23, 2),
                let month = monthCodes.firstIndex(of: monthName).map({ $0 + 1 })
            else { return nil }
            return date(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func imfFixdate(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT",
            let day = Int(fields[1]), let year = Int(fields[3]),
            let month = months.firstIndex(of: String(fields[2])).map({ $0 + 1 })
        else { return nil }
        let clock = fields[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2])
        else { return nil }
        return date(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The date of a checked civil date and time in GMT, or `nil` for a field out of its range.
    private static func date(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...31).contains(day), (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        // Days from 1970-01-01 to the date (Howard Hinnant's days-from-civil).
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    /// The three bytes of each month's name, as one number.
    private static let monthCodes = months.map { name in name.utf8.reduce(0) { $0 << 8 | Int($1) } }

    /// Formatters of every form, the usual one first (for what the hand-written reader does not take).
    private static let obsoleteFormatters = Mutex<[DateFormatter]>(
        ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        })
}
