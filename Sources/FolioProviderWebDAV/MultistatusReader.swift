import CLibXML2
import Foundation

/// Reads a multistatus body with libxml2's SAX2 push parser, behind ``WebDAVMultistatus/parse(_:limit:)``: no
/// tree is built and no string is made for an element Folio does not keep (a listing of 10,000 members has some
/// 150,000 elements). Elements are matched by namespace and local name (`DAV:` elements, Folio's own dead
/// properties and a CalDAV-style `getctag`; other namespaces' properties are skipped), text is gathered per
/// element, and a property counts only inside a `propstat` whose status is 2xx. Entities are never loaded or
/// expanded (no `XML_PARSE_NOENT`, no network), and errors go to the reader, never to the process's stderr.
final class MultistatusReader {
    private(set) var responses: [WebDAVMultistatus.Response] = []
    private(set) var sawMultistatus = false
    /// The multistatus element was closed: the reply was read to its end (not cut off).
    private(set) var sawEnd = false
    /// Why the reply is not a multistatus, found while reading: the parser's own error or a value Folio refuses.
    private(set) var failure: String?

    /// The elements open now, outermost first.
    private var path: [Name] = []
    /// The text of the innermost element, as bytes (only the elements whose value is kept make a string of it).
    private var text: [UInt8] = []
    private var href: String?
    private var responseStatus: Int?
    private var properties = WebDAVProperties()
    private var found = WebDAVProperties()
    private var propstatStatus: Int?
    private var lock = WebDAVProperties.ActiveLock(owner: "", token: "")
    private var context: xmlParserCtxtPtr?

    /// An element Folio reads, by namespace and local name; `.other` for the rest.
    enum Name: Equatable {
        case multistatus, response, href, status, propstat, prop, resourcetype, collection
        case getetag, getcontentlength, getlastmodified, getcontenttype, displayname
        case lockdiscovery, activelock, owner, locktoken, getctag
        case folio(String)
        case other

        static let davElements: [String: Name] = [
            "multistatus": .multistatus, "response": .response, "href": .href, "status": .status,
            "propstat": .propstat, "prop": .prop, "resourcetype": .resourcetype, "collection": .collection,
            "getetag": .getetag, "getcontentlength": .getcontentlength, "getlastmodified": .getlastmodified,
            "getcontenttype": .getcontenttype, "displayname": .displayname, "lockdiscovery": .lockdiscovery,
            "activelock": .activelock, "owner": .owner, "locktoken": .locktoken,
        ]
    }

    /// Reads `body` whole; afterwards `failure`, `sawMultistatus`, `sawEnd` and `responses` say what it held.
    func read(_ body: Data) {
        var handler = xmlSAXHandler()
        handler.initialized = XML_SAX2_MAGIC
        handler.startElementNs = { user, localName, _, uri, _, _, _, _, _ in
            guard let user, let localName else { return }
            Unmanaged<MultistatusReader>.fromOpaque(user).takeUnretainedValue().start(localName, uri)
        }
        handler.endElementNs = { user, _, _, _ in
            guard let user else { return }
            Unmanaged<MultistatusReader>.fromOpaque(user).takeUnretainedValue().end()
        }
        handler.characters = { user, bytes, count in
            guard let user, let bytes, count > 0 else { return }
            Unmanaged<MultistatusReader>.fromOpaque(user).takeUnretainedValue()
                .text.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count)))
        }
        handler.serror = { user, error in
            guard let user else { return }
            let reader = Unmanaged<MultistatusReader>.fromOpaque(user).takeUnretainedValue()
            guard let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
            let message = error.pointee.message.map { String(cString: $0) }?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "error \(error.pointee.code)"
            reader.fail("\(message) (line \(error.pointee.line))")
        }
        let user = Unmanaged.passUnretained(self).toOpaque()
        withExtendedLifetime(self) {
            guard let context = xmlCreatePushParserCtxt(&handler, user, nil, 0, nil) else {
                return fail("the XML parser could not be made")
            }
            self.context = context
            defer {
                self.context = nil
                xmlFreeParserCtxt(context)
            }
            _ = xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue))
            body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                // In pieces: the parser's chunk length is a C int.
                var offset = 0
                repeat {
                    let count = min(bytes.count - offset, 1 << 24)
                    let start = bytes.baseAddress.map { ($0 + offset).assumingMemoryBound(to: CChar.self) }
                    let last: Int32 = offset + count == bytes.count ? 1 : 0
                    if xmlParseChunk(context, start, Int32(count), last) != 0 || failure != nil { break }
                    offset += count
                } while offset < bytes.count
            }
            if failure == nil, context.pointee.wellFormed == 0 { fail("the XML is not well-formed") }
        }
    }

    private func start(_ localName: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?) {
        let name: Name
        if let uri, Self.equal(uri, "DAV:") {
            name = Name.davElements[String(cString: localName)] ?? .other
        } else if let uri, Self.equal(uri, WebDAVProperties.folioNamespace) {
            name = .folio(String(cString: localName))
        } else if let uri, Self.equal(uri, "http://calendarserver.org/ns/"), Self.equal(localName, "getctag") {
            name = .getctag
        } else {
            name = .other
        }
        text.removeAll(keepingCapacity: true)
        switch (name, path.last) {
        case (.multistatus, nil):
            sawMultistatus = true
        case (.response, .multistatus):
            (href, responseStatus, properties) = (nil, nil, WebDAVProperties())
        case (.propstat, .response):
            (found, propstatStatus) = (WebDAVProperties(), nil)
        case (.collection, .resourcetype):
            found.isCollection = true
        case (.activelock, .lockdiscovery):
            lock = .init(owner: "", token: "")
        default:
            break
        }
        path.append(name)
    }

    private func end() {
        guard let name = path.popLast() else { return }
        let parent = path.last
        defer { text.removeAll(keepingCapacity: true) }
        if name == .multistatus, path.isEmpty { sawEnd = true }
        switch (name, parent) {
        case (.href, .response):
            href = value()
        case (.status, .response):
            responseStatus = statusCode()
        case (.status, .propstat):
            propstatStatus = statusCode()
        case (.propstat, .response):
            if let status = propstatStatus, (200..<300).contains(status) { properties.merge(found) }
        case (.getetag, .prop):
            found.entityTag = value()
        case (.getcontentlength, .prop):
            let text = value()
            guard let length = Int64(text), length >= 0 else {
                return fail("getcontentlength \"\(text.prefix(40))\" of \(href ?? "a response") is not a size")
            }
            found.contentLength = length
        case (.getlastmodified, .prop):
            found.lastModified = WebDAVProperties.httpDate(value())
        case (.getcontenttype, .prop):
            found.contentType = value()
        case (.displayname, .prop):
            found.displayName = value()
        case (.owner, .activelock):
            lock.owner = value()
        case (.href, .locktoken):
            lock.token = value()
        case (.activelock, .lockdiscovery):
            found.activeLocks.append(lock)
        case (.getctag, .prop):
            found.collectionTag = value()
        case (.folio(let property), .prop):
            found.folio[property] = value()
        case (.response, .multistatus):
            guard let href, !href.isEmpty else { return fail("a response without its href") }
            responses.append(.init(href: href, status: responseStatus, properties: properties))
        default:
            break
        }
    }

    /// Whether the parser's NUL-terminated `bytes` are `string`'s.
    private static func equal(_ bytes: UnsafePointer<xmlChar>, _ string: String) -> Bool {
        bytes.withMemoryRebound(to: CChar.self, capacity: 1) { strcmp($0, string) == 0 }
    }

    /// Stops reading: the reply is not a multistatus Folio can trust.
    private func fail(_ why: String) {
        if failure == nil { failure = why }
        if let context { xmlStopParser(context) }
    }

    /// The element's text without the XML white space (space, tab, CR, LF) around it.
    private func value() -> String {
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        }
        guard let start = text.firstIndex(where: { !isSpace($0) }), let end = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: text[start...end], as: UTF8.self)
    }

    /// The code of the element's status line (`HTTP/1.1 200 OK`), or `nil`.
    private func statusCode() -> Int? {
        let fields = value().split(separator: " ")
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
