import FolioCore
import FolioProviderWebDAV
import FolioTestServers
import Foundation
import XCTest

extension WebDAVTestServer {
    /// `PROPFIND Depth: 1` of the collection at `path` (ending in `/`), read with `WebDAVMultistatus.parse`: the
    /// collection's own properties and its members' by name. Fails the test if the reply is not a 207.
    func listing(
        _ path: String, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (collection: WebDAVProperties?, members: [String: WebDAVProperties]) {
        let reply = try request("PROPFIND", path, headers: ["Depth: 1"])
        XCTAssertEqual(reply.status, 207, reply.text, file: file, line: line)
        let listing = try WebDAVMultistatus.parse(reply.body)
        let base = baseURL.appendingPathComponent(String(path.dropFirst()))
        var collection: WebDAVProperties?
        var members: [String: WebDAVProperties] = [:]
        for response in listing.responses {
            switch try WebDAVHref(response.href, listing: base) {
            case .collection: collection = response.properties
            case .member(let name): members[name] = response.properties
            }
        }
        return (collection, members)
    }

    /// Makes, through the server (`MKCOL`, `PUT`), the folder `/Sample/` holding `a letter.txt` (6 bytes),
    /// `café.txt` (6 bytes, a name with an accent) and the empty folder `sub folder`.
    func makeSampleFolder(file: StaticString = #filePath, line: UInt = #line) throws {
        let steps: [(String, String, Data?)] = [
            ("MKCOL", "/Sample/", nil), ("MKCOL", "/Sample/sub%20folder/", nil),
            ("PUT", "/Sample/a%20letter.txt", Data("hello\n".utf8)),
            ("PUT", "/Sample/caf%C3%A9.txt", Data("crème".utf8)),
        ]
        for (method, path, body) in steps {
            let reply = try request(method, path, headers: ["Content-Type: application/octet-stream"], body: body)
            XCTAssertEqual(reply.status, 201, "\(method) \(path): \(reply.text)", file: file, line: line)
        }
    }
}

extension WebDAVTestServer {
    /// Makes the sample folder (``makeSampleFolder(file:line:)``), lists it with `PROPFIND Depth: 1` and checks
    /// what every server must send (its members by name, sizes, collection flags, times) and the kinds of ETag this
    /// server may send for files and for folders (Apache's depend on the time since the last change).
    func assertSampleFolderListing(
        fileETags: Set<WebDAVServerFacts.ETag>, folderETags: Set<WebDAVServerFacts.ETag>,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        try makeSampleFolder(file: file, line: line)
        let (collection, members) = try listing("/Sample/", file: file, line: line)
        XCTAssertEqual(collection?.isCollection, true, "the folder itself is in its listing", file: file, line: line)
        XCTAssertEqual(Set(members.keys), ["a letter.txt", "café.txt", "sub folder"], file: file, line: line)
        XCTAssertEqual(members["a letter.txt"]?.contentLength, 6, file: file, line: line)
        XCTAssertEqual(members["café.txt"]?.contentLength, Int64("crème".utf8.count), file: file, line: line)
        XCTAssertEqual(members["a letter.txt"]?.isCollection, false, file: file, line: line)
        XCTAssertEqual(members["sub folder"]?.isCollection, true, file: file, line: line)
        for (name, properties) in members {
            let kinds = properties.isCollection ? folderETags : fileETags
            let kind = WebDAVServerFacts.ETag(properties.entityTag)
            XCTAssertTrue(kinds.contains(kind), "\(name): \(kind) ETag", file: file, line: line)
            XCTAssertNotNil(properties.lastModified, "\(name) has a time", file: file, line: line)
        }
        let kind = WebDAVServerFacts.ETag(collection?.entityTag)
        XCTAssertTrue(folderETags.contains(kind), "the folder: \(kind) ETag", file: file, line: line)
    }
}

extension WebDAVTestServer {
    /// Writes a file (and a dead property on it, where the server keeps them), kills the server, checks that
    /// nothing answers, starts it again and checks that it serves the same file (and property).
    func assertServesWhatItHadAfterAKill(
        deadProperties: Bool, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let put = try request("PUT", "/kept.txt", body: Data("kept".utf8))
        XCTAssertEqual(put.status, 201, put.text, file: file, line: line)
        let namespace = WebDAVServerFacts.namespace
        if deadProperties {
            let patch = try request(
                "PROPPATCH", "/kept.txt", headers: ["Content-Type: application/xml"],
                body: Data((#"<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:F="\#(namespace)">"#
                    + "<D:set><D:prop><F:tags>red</F:tags></D:prop></D:set></D:propertyupdate>").utf8))
            XCTAssertEqual(patch.status, 207, patch.text, file: file, line: line)
        }
        kill()
        let down = try request("GET", "/kept.txt")
        XCTAssertEqual(down.status, 0, "nothing answers while it is down", file: file, line: line)
        XCTAssertEqual(down.exitCode, 7, "curl: connection refused", file: file, line: line)
        try start()
        XCTAssertEqual(try request("GET", "/kept.txt").text, "kept", file: file, line: line)
        if deadProperties {
            let reply = try request(
                "PROPFIND", "/kept.txt", headers: ["Depth: 0", "Content-Type: application/xml"],
                body: Data((#"<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:F="\#(namespace)">"#
                    + "<D:prop><F:tags/></D:prop></D:propfind>").utf8))
            XCTAssertEqual(try PropertyValues.read(reply.body)[namespace + " tags"], "red", file: file, line: line)
        }
    }
}
