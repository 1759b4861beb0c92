import FolioCore
import Foundation

/// A `207 Multi-Status` reply to `PROPFIND` (RFC 4918 §13), read with a real XML parser (namespaces resolved, so
/// every prefix style servers send is matched by the `DAV:` namespace, never by strings). What a server sends that
/// cannot be a multistatus — malformed or truncated XML, a document type declaration (entity expansion, external
/// entities, or an encoding that could hide one), a body over the size limit, content after the multistatus's end,
/// a response without its `href`, one resource named twice — is a clear
/// ``FolioError/providerFailure(_:retryable:)``, never a crash and never a partial answer taken for a whole one.
public struct WebDAVMultistatus: Sendable, Equatable {
    /// One `response` element: a resource and the properties found for it (those with a `200` status).
    public struct Response: Sendable, Equatable {
        /// The resource's `href`, as sent (percent-encoded, absolute path or full URL).
        public var href: String
        /// The response's own status code (`404` for a resource that is gone), if it carries one.
        public var status: Int?
        /// The properties the server found.
        public var properties: WebDAVProperties
    }

    /// The responses, in the order the server sent them.
    public var responses: [Response]

    /// The largest reply read by default: a folder of 100,000 entries is about 50 MB of XML.
    public static let defaultLimit = 64 << 20

    /// Parses a multistatus body of at most `limit` bytes.
    public static func parse(_ body: Data, limit: Int = defaultLimit) throws(FolioError) -> WebDAVMultistatus {
        guard body.count <= limit else {
            throw FolioError.providerFailure(
                "the server's PROPFIND reply is \(body.count) bytes, more than the \(limit) read", retryable: false)
        }
        if let why = Self.unreadableEncoding(body) {
            throw FolioError.providerFailure(
                "the server's PROPFIND reply is refused: \(why) (only UTF-8 and ASCII-compatible encodings are read, "
                    + "so a document type cannot hide from the check below)", retryable: false)
        }
        if Self.declaresDocumentType(body) {
            throw FolioError.providerFailure(
                "the server's PROPFIND reply declares a document type (refused: entities are never expanded)",
                retryable: false)
        }
        let reader = MultistatusReader()
        reader.read(body)
        guard reader.failure == nil, reader.sawMultistatus, reader.sawEnd else {
            let why = reader.failure ?? (reader.sawMultistatus ? "cut off before its end" : "no multistatus element")
            throw FolioError.providerFailure(
                "the server's PROPFIND reply is not a multistatus: \(why)", retryable: true)
        }
        // The parser stops at the root's end and says nothing of what follows it: two replies run together (a
        // proxy's error page after the document) would pass for one.
        guard Self.endsWithRootEndTag(body) else {
            throw FolioError.providerFailure(
                "the server's PROPFIND reply is not a multistatus: content after the end of the multistatus",
                retryable: true)
        }
        var named = Set<String>()
        for response in reader.responses {
            // An href that does not decode is refused where it is understood (``WebDAVHref``).
            guard let resource = WebDAVHref.resourceKey(response.href) else { continue }
            guard named.insert(resource).inserted else {
                // Two items of one name in a folder cannot be; which of the two is right cannot be known.
                throw FolioError.providerFailure(
                    "the server's PROPFIND reply names one resource twice: \(response.href.prefix(200))",
                    retryable: false)
            }
        }
        return WebDAVMultistatus(responses: reader.responses)
    }

    /// Whether `body` ends with the end tag of a `multistatus` element (whitespace after it aside).
    private static func endsWithRootEndTag(_ body: Data) -> Bool {
        let tail = String(decoding: body.suffix(256), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard tail.hasSuffix(">"), let open = tail.range(of: "</", options: .backwards) else { return false }
        let name = tail[open.upperBound..<tail.index(before: tail.endIndex)].trimmingCharacters(in: .whitespaces)
        return name == "multistatus" || name.hasSuffix(":multistatus")
    }

    /// The encodings a reply may declare: all of them ASCII-compatible, so the bytes of `<!DOCTYPE` are the same
    /// as in ASCII and ``declaresDocumentType(_:)`` sees them.
    private static let readableEncodings: Set<String> = [
        "utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "iso-8859-15", "latin1", "windows-1252",
    ]

    /// Why `body` is in an encoding where `<!DOCTYPE` could be written with other bytes than ASCII's (UTF-16 or
    /// UTF-32, with or without a byte-order mark; EBCDIC; UTF-7 or another declared in the XML declaration), or
    /// `nil` if it is not.
    private static func unreadableEncoding(_ body: Data) -> String? {
        let holdsNUL = body.withUnsafeBytes { bytes in
            bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
        }
        if holdsNUL { return "it holds NUL bytes (UTF-16 or UTF-32?)" }
        var start = body.startIndex
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }  // UTF-8's byte-order mark
        let ascii = Set(" \t\r\n".utf8)
        guard let first = body[start...].first(where: { !ascii.contains($0) }) else { return nil }
        guard first == UInt8(ascii: "<") else {
            return "it does not begin with \"<\" (first byte \(first))"
        }
        let head = String(decoding: body[start...].prefix(256), as: UTF8.self)
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>") else { return nil }
        let declaration = head[..<end.lowerBound]
        guard let attribute = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[attribute.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return "its encoding cannot be read" }
        let name = rest.dropFirst().prefix { $0 != quote }.lowercased()
        return readableEncodings.contains(name) ? nil : "it declares the encoding \(name.prefix(40))"
    }

    /// Whether the body holds `<!DOCTYPE` anywhere (case aside): only a prolog may declare one, and a prolog may
    /// be padded with comments of any length; a reply that merely mentions it in a comment is refused too.
    private static func declaresDocumentType(_ body: Data) -> Bool {
        let marker = Array("<!doctype".utf8)
        return body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            guard bytes.count >= marker.count else { return false }
            var start = 0
            while start <= bytes.count - marker.count {
                if bytes[start] == marker[0] {
                    var index = 1
                    while index < marker.count && bytes[start + index] | 0x20 == marker[index] { index += 1 }
                    if index == marker.count { return true }
                }
                start += 1
            }
            return false
        }
    }
}
