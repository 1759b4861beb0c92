import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `XMLParser` delegate behind ``WebDAVMultistatus/parse(_:limit:)``: elements are matched by namespace and
/// local name (`DAV:` elements, Folio's own dead properties and a CalDAV-style `getctag`; other namespaces'
/// properties are skipped), text is gathered per element, and
/// a property counts only inside a `propstat` whose status is 2xx.
final class MultistatusReader: NSObject, XMLParserDelegate {
    private(set) var responses: [WebDAVMultistatus.Response] = []
    private(set) var sawMultistatus = false
    /// The multistatus element was closed: the reply was read to its end (not cut off).
    private(set) var sawEnd = false
    /// Why the reply is not a multistatus, found while reading (the parser itself may not see anything wrong).
    private(set) var failure: String?

    /// The `DAV:` elements open now, outermost first (others as `nil`).
    private var path: [String?] = []
    private var text = ""
    private var href: String?
    private var responseStatus: Int?
    private var properties = WebDAVProperties()
    private var found = WebDAVProperties()
    private var propstatStatus: Int?
    private var lock = WebDAVProperties.ActiveLock(owner: "", token: "")

    private static let dav = "DAV:"
    private static let calendarServer = "http://calendarserver.org/ns/"

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let name: String? = switch namespaceURI {
        case Self.dav: elementName
        case WebDAVProperties.folioNamespace: "folio:" + elementName
        case Self.calendarServer where elementName == "getctag": "cs:getctag"
        default: nil
        }
        text = ""
        switch (name, path.last ?? nil) {
        case ("multistatus", nil) where path.isEmpty:
            sawMultistatus = true
        case ("response", "multistatus"):
            (href, responseStatus, properties) = (nil, nil, WebDAVProperties())
        case ("propstat", "response"):
            (found, propstatStatus) = (WebDAVProperties(), nil)
        case ("collection", "resourcetype"):
            found.isCollection = true
        case ("activelock", "lockdiscovery"):
            lock = .init(owner: "", token: "")
        default:
            break
        }
        path.append(name)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
    ) {
        let name = path.popLast() ?? nil
        let parent = path.last ?? nil
        let value = Self.trimmed(text)
        text = ""
        guard let name else { return }
        if name == "multistatus", path.isEmpty { sawEnd = true }
        switch (name, parent) {
        case ("href", "response"):
            href = value
        case ("status", "response"):
            responseStatus = Self.statusCode(value)
        case ("status", "propstat"):
            propstatStatus = Self.statusCode(value)
        case ("propstat", "response"):
            if let status = propstatStatus, (200..<300).contains(status) { properties.merge(found) }
        case ("getetag", "prop"):
            found.entityTag = value
        case ("getcontentlength", "prop"):
            guard let length = Int64(value), length >= 0 else {
                return fail("getcontentlength \"\(value.prefix(40))\" of \(href ?? "a response") is not a size")
            }
            found.contentLength = length
        case ("getlastmodified", "prop"):
            found.lastModified = WebDAVProperties.httpDate(value)
        case ("getcontenttype", "prop"):
            found.contentType = value
        case ("displayname", "prop"):
            found.displayName = value
        case ("owner", "activelock"):
            lock.owner = value
        case ("href", "locktoken"):
            lock.token = value
        case ("activelock", "lockdiscovery"):
            found.activeLocks.append(lock)
        case ("cs:getctag", "prop"):
            found.collectionTag = value
        case (let folio, "prop") where folio.hasPrefix("folio:"):
            found.folio[String(folio.dropFirst(6))] = value
        case ("response", "multistatus"):
            guard let href, !href.isEmpty else { return fail("a response without its href") }
            responses.append(.init(href: href, status: responseStatus, properties: properties))
        default:
            break
        }
    }

    /// Stops reading: the reply is not a multistatus Folio can trust.
    private func fail(_ why: String) {
        if failure == nil { failure = why }
    }

    /// `text` without the XML white space (space, tab, CR, LF) around it; on the bytes, without bridging to
    /// `NSString` (a listing of 10,000 members has ten values each).
    private static func trimmed(_ text: String) -> String {
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        }
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last, isSpace(first) || isSpace(last) else { return text }
        guard let start = utf8.firstIndex(where: { !isSpace($0) }), let end = utf8.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[start...end])
    }

    /// The code of a status line (`HTTP/1.1 200 OK`), or `nil`.
    private static func statusCode(_ line: String) -> Int? {
        let fields = line.split(separator: " ")
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/") else { return nil }
        return Int(fields[1])
    }
}

extension WebDAVProperties {
    /// Takes the properties `other` has (a second `propstat` with a 2xx status).
    mutating func merge(_ other: WebDAVProperties) {
        isCollection = isCollection || other.isCollection
        entityTag = other.entityTag ?? entityTag
        contentLength = other.contentLength ?? contentLength
        lastModified = other.lastModified ?? lastModified
        contentType = other.contentType ?? contentType
        displayName = other.displayName ?? displayName
        collectionTag = other.collectionTag ?? collectionTag
        activeLocks += other.activeLocks
        folio.merge(other.folio) { _, new in new }
    }
}
