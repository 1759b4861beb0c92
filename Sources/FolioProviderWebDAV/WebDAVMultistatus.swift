import FolioCore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A `207 Multi-Status` reply to `PROPFIND` (RFC 4918 §13), read with a real XML parser (namespaces resolved, so
/// every prefix style servers send is matched by the `DAV:` namespace, never by strings). What a server sends that
/// cannot be a multistatus — malformed or truncated XML, a document type declaration (entity expansion, external
/// entities), a body over the size limit, a response without its `href` — is a clear
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
        if Self.declaresDocumentType(body) {
            throw FolioError.providerFailure(
                "the server's PROPFIND reply declares a document type (refused: entities are never expanded)",
                retryable: false)
        }
        let reader = MultistatusReader()
        let parser = XMLParser(data: body)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        guard parser.parse(), reader.failure == nil, reader.sawMultistatus, reader.sawEnd else {
            let why = reader.failure ?? parser.parserError.map { "\($0.localizedDescription)" }
                ?? (reader.sawMultistatus ? "cut off before its end" : "no multistatus element")
            throw FolioError.providerFailure(
                "the server's PROPFIND reply is not a multistatus: \(why)", retryable: true)
        }
        return WebDAVMultistatus(responses: reader.responses)
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
