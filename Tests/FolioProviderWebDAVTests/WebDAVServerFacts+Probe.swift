import FolioProviderWebDAV
import FolioTestServers
import Foundation

/// The probe that measures ``WebDAVServerFacts`` with real requests.
extension WebDAVServerFacts {
    /// A request the probe needs for its setup failed: the server is not usable as a WebDAV server at all.
    struct ProbeFailed: Error, CustomStringConvertible {
        /// What failed, with the status and body.
        let description: String
    }

    /// The Folio-like namespace the probe's dead property is in.
    static let namespace = "urn:x-folio:test"

    /// Measures the facts on `server`, in a new collection `/probe/`.
    init(probing server: WebDAVTestServer) throws {
        let probe = Probe(server: server)
        try probe.expect(201, "MKCOL", "/probe/")
        try probe.expect(201, "MKCOL", "/probe/sub/")
        try probe.expect(201, "MKCOL", "/probe/sub/deeper/")
        try probe.expect(201, "PUT", "/probe/sub/deeper/deep.txt", body: "deep")
        let created = try probe.expect(201, "PUT", "/probe/file.txt", body: "one")
        putReplyETag = ETag(created.headers["etag"])
        // Apache marks the ETag of what changed within the last second weak: date everything back.
        try probe.dateBack(
            ["/probe/file.txt", "/probe/sub/deeper/deep.txt", "/probe/sub/deeper", "/probe/sub", "/probe"])

        let file = try probe.properties("/probe/file.txt")
        fileETag = ETag(file.entityTag)
        getReplyETag = ETag(try probe.expect(200, "GET", "/probe/file.txt").headers["etag"])
        let folder = try probe.properties("/probe/")
        folderETag = ETag(folder.entityTag)
        lastModified = file.lastModified != nil && folder.lastModified != nil

        if let listed = file.entityTag {
            let tag = fileETag == .unquoted ? "\"\(listed)\"" : listed
            let put = try probe.request("PUT", "/probe/file.txt", headers: ["If-Match: \(tag)"], body: "two")
            ifMatchWithListedETagSucceeds = (200..<300).contains(put.status)
        } else {
            ifMatchWithListedETagSucceeds = false
        }
        try probe.expect(201, "PUT", "/probe/other.txt", body: "other")
        let before = try probe.content("/probe/other.txt")
        let wrong = try probe.request("PUT", "/probe/other.txt", headers: [#"If-Match: "folio-wrong""#], body: "x")
        ifMatchHonoured = try wrong.status == 412 && (probe.content("/probe/other.txt")) == before
        let current = try probe.content("/probe/other.txt")
        let star = try probe.request("PUT", "/probe/other.txt", headers: ["If-None-Match: *"], body: "y")
        ifNoneMatchHonoured = try star.status == 412 && (probe.content("/probe/other.txt")) == current

        try probe.dateBack(["/probe"])
        let root = try probe.properties("/probe/").entityTag.map(Self.opaque)
        try probe.expect(204, "PUT", "/probe/sub/deeper/deep.txt", body: "deeper and longer", orCreated: true)
        let rootAfter = try probe.properties("/probe/").entityTag.map(Self.opaque)
        folderETagPropagates = root != nil && rootAfter != nil && root != rootAfter

        let ctagReply = try probe.request(
            "PROPFIND", "/probe/", headers: ["Depth: 0", "Content-Type: application/xml"],
            body: #"<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:C="http://calendarserver.org/ns/">"#
                + "<D:prop><C:getctag/></D:prop></D:propfind>")
        ctag = try !(PropertyValues.read(ctagReply.body)["http://calendarserver.org/ns/ getctag"] ?? "").isEmpty
        let sync = try probe.request(
            "REPORT", "/probe/", headers: ["Depth: 0", "Content-Type: application/xml"],
            body: #"<?xml version="1.0"?><D:sync-collection xmlns:D="DAV:"><D:sync-token/>"#
                + "<D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>")
        syncCollectionStatus = sync.status

        try probe.expect(201, "PUT", "/probe/doomed.txt", body: "doomed")
        let delete = try probe.request("DELETE", "/probe/doomed.txt", headers: [#"If-Match: "folio-wrong""#])
        deleteIfMatchHonoured = try delete.status == 412 && (probe.content("/probe/doomed.txt")) == "doomed"
        // A server that ignores If-Match on DELETE has deleted it: the MOVE needs it back.
        try probe.expect(204, "PUT", "/probe/doomed.txt", body: "doomed", orCreated: true)
        let move = try probe.request(
            "MOVE", "/probe/doomed.txt",
            headers: ["Destination: \(server.baseURL.absoluteString)/probe/other.txt", "Overwrite: F"])
        moveOverwriteFalseHonoured = try move.status == 412 && (probe.content("/probe/doomed.txt")) == "doomed"
            && (probe.content("/probe/other.txt")) != "doomed"

        let patch = try probe.request(
            "PROPPATCH", "/probe/other.txt", headers: ["Content-Type: application/xml"],
            body: #"<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:F="\#(Self.namespace)">"#
                + "<D:set><D:prop><F:tags>red,blue</F:tags></D:prop></D:set></D:propertyupdate>")
        deadPropertiesKept = try patch.status == 207 && (probe.tags("/probe/other.txt")) == "red,blue"
        try probe.expect(
            201, "MOVE", "/probe/other.txt",
            headers: ["Destination: \(server.baseURL.absoluteString)/probe/moved.txt", "Overwrite: F"])
        moveKeepsDeadProperties = try deadPropertiesKept && (probe.tags("/probe/moved.txt")) == "red,blue"
    }

    /// An entity tag without its weakness mark (Apache's turns from weak to strong a second after a change).
    private static func opaque(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }

    /// The requests of one probe.
    private struct Probe {
        let server: WebDAVTestServer

        func request(_ method: String, _ path: String, headers: [String] = [], body: String? = nil) throws
            -> Curl.Reply
        {
            try server.request(method, path, headers: headers, body: body.map { Data($0.utf8) })
        }

        /// A request that must answer `status` (or 201 when `orCreated`) for the probe to go on.
        @discardableResult
        func expect(
            _ status: Int, _ method: String, _ path: String, headers: [String] = [], body: String? = nil,
            orCreated: Bool = false
        ) throws -> Curl.Reply {
            let reply = try request(method, path, headers: headers, body: body)
            guard reply.status == status || (orCreated && reply.status == 201) else {
                throw ProbeFailed(description: "\(method) \(path): \(reply.status) \(reply.text)")
            }
            return reply
        }

        /// The live properties of one resource (`PROPFIND Depth: 0`, all properties).
        func properties(_ path: String) throws -> WebDAVProperties {
            let reply = try expect(207, "PROPFIND", path, headers: ["Depth: 0"])
            guard let response = try WebDAVMultistatus.parse(reply.body).responses.first else {
                throw ProbeFailed(description: "PROPFIND \(path): no response")
            }
            return response.properties
        }

        /// Sets the modification time of these paths (from the server's root) to a minute ago, in its folder.
        func dateBack(_ paths: [String]) throws {
            let past = Date().addingTimeInterval(-60)
            for path in paths {
                try FileManager.default.setAttributes(
                    [.modificationDate: past], ofItemAtPath: server.documentRoot + path)
            }
        }

        /// The body of a `GET` (nil when it does not answer 200).
        func content(_ path: String) throws -> String? {
            let reply = try request("GET", path)
            return reply.status == 200 ? reply.text : nil
        }

        /// The probe's dead property on `path`, when the server reports it.
        func tags(_ path: String) throws -> String? {
            let reply = try request(
                "PROPFIND", path, headers: ["Depth: 0", "Content-Type: application/xml"],
                body: #"<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:F="\#(WebDAVServerFacts.namespace)">"#
                    + "<D:prop><F:tags/></D:prop></D:propfind>")
            guard reply.status == 207 else { return nil }
            return try PropertyValues.read(reply.body)[WebDAVServerFacts.namespace + " tags"]
        }
    }
}
