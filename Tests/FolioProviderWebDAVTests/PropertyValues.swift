import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The text of every property a PROPFIND reply reports with a `200` status, keyed by namespace and name
/// (`"urn:x-folio:test tags"`), read with a namespace-aware XML parser: how the server-facts probe sees properties
/// the provider's reader does not (dead properties, `getctag`, `sync-token`). Empty values are kept as "".
final class PropertyValues: NSObject, XMLParserDelegate {
    /// Property text by `"namespace name"`, from the propstats whose status is 200.
    private(set) var values: [String: String] = [:]
    private var inProp = false
    private var depthInProp = 0
    private var current: String?
    private var text = ""
    private var pending: [String: String] = [:]
    private var statusText: String?
    private var readingStatus = false

    /// The properties with a 200 status in `body`; throws when it is not well-formed XML.
    static func read(_ body: Data) throws -> [String: String] {
        let reader = PropertyValues()
        let parser = XMLParser(data: body)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        guard parser.parse() else {
            throw CocoaError(.propertyListReadCorrupt, userInfo: [NSDebugDescriptionErrorKey: "not XML"])
        }
        return reader.values
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if inProp {
            depthInProp += 1
            if depthInProp == 1 {
                current = (namespaceURI ?? "") + " " + name
                text = ""
            }
        } else if namespaceURI == "DAV:" && name == "propstat" {
            pending = [:]
            statusText = nil
        } else if namespaceURI == "DAV:" && name == "prop" {
            inProp = true
            depthInProp = 0
        } else if namespaceURI == "DAV:" && name == "status" {
            readingStatus = true
            text = ""
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if (inProp && depthInProp >= 1) || readingStatus { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if inProp {
            if depthInProp == 0 {
                inProp = false
            } else {
                if depthInProp == 1, let current { pending[current] = text }
                depthInProp -= 1
            }
        } else if readingStatus {
            readingStatus = false
            statusText = text
        } else if namespaceURI == "DAV:" && name == "propstat" {
            if statusText?.split(separator: " ").dropFirst().first == "200" {
                values.merge(pending) { _, new in new }
            }
        }
    }
}
