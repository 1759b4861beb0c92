import Foundation

/// `207 Multi-Status` bodies for the fault tests, written as Apache writes them (`D:` prefix).
enum MultistatusBody {
    /// One `response` element for `href`: a collection, or a file of `length` bytes with the ETag `etag` as given
    /// (quoted, weak or unquoted).
    static func response(_ href: String, folder: Bool = false, etag: String? = nil, length: Int? = nil) -> String {
        var properties = folder ? "<D:resourcetype><D:collection/></D:resourcetype>" : "<D:resourcetype/>"
        if let etag { properties += "<D:getetag>\(etag)</D:getetag>" }
        if let length { properties += "<D:getcontentlength>\(length)</D:getcontentlength>" }
        properties += "<D:getlastmodified>Thu, 26 Nov 2026 06:00:00 GMT</D:getlastmodified>"
        return "<D:response><D:href>\(href)</D:href><D:propstat><D:prop>\(properties)</D:prop>"
            + "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    }

    /// A whole multistatus holding `responses`.
    static func document(_ responses: [String]) -> Data {
        Data(("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:multistatus xmlns:D=\"DAV:\">"
            + responses.joined(separator: "\n") + "</D:multistatus>\n").utf8)
    }

    /// A listing of `collection` (its own response first) with `members`.
    static func listing(_ collection: String, _ members: [String]) -> Data {
        document([response(collection, folder: true)] + members)
    }
}
