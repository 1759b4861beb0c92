import FolioCore
import FolioProviderWebDAV
import FolioTestServers
import Foundation
import XCTest

/// Issue 15: the multistatus reader against the reference server itself, a private Apache `mod_dav` on loopback:
/// what Apache answers to `PROPFIND Depth: 1` for a folder of files and folders (names with a space and an accent,
/// a file it wrote through `PUT`) is read back whole.
final class ApacheMultistatusTests: XCTestCase {
    private var server: ApacheServer!

    override func setUpWithError() throws {
        server = try startOrSkip { try ApacheServer() }
    }

    override func tearDown() {
        server?.stop()
    }

    func testAFolderListedByApacheIsReadBackWhole() throws {
        let drive = server.documentRoot + "/Drive"
        try FileManager.default.createDirectory(atPath: drive + "/sub folder", withIntermediateDirectories: true)
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: drive + "/a letter.txt"))
        try Data("crème".utf8).write(to: URL(fileURLWithPath: drive + "/café.txt"))
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: drive)
        let put = try server.request("PUT", "/Drive/put.txt", headers: ["Content-Type: text/plain"])
        XCTAssertEqual(put.status, 201, String(decoding: put.body, as: UTF8.self))

        let reply = try server.request("PROPFIND", "/Drive/", headers: ["Depth: 1"])
        XCTAssertEqual(reply.status, 207)
        let listing = try WebDAVMultistatus.parse(reply.body)
        let base = server.baseURL.appendingPathComponent("Drive/")
        var members: [String: WebDAVProperties] = [:]
        var sawCollection = false
        for response in listing.responses {
            switch try WebDAVHref(response.href, listing: base) {
            case .collection:
                sawCollection = true
                XCTAssertTrue(response.properties.isCollection)
            case .member(let name):
                members[name] = response.properties
            }
        }
        XCTAssertTrue(sawCollection, "the folder itself is in its listing")
        XCTAssertEqual(Set(members.keys), ["a letter.txt", "café.txt", "sub folder", "put.txt"])
        XCTAssertEqual(members["a letter.txt"]?.contentLength, 6)
        XCTAssertEqual(members["café.txt"]?.contentLength, Int64("crème".utf8.count))
        XCTAssertEqual(members["put.txt"]?.contentLength, 0)
        XCTAssertEqual(members["sub folder"]?.isCollection, true)
        XCTAssertEqual(members["a letter.txt"]?.isCollection, false)
        for (name, properties) in members where !properties.isCollection {
            XCTAssertNotNil(properties.entityTag, "\(name) has an ETag")
            XCTAssertNotNil(properties.lastModified, "\(name) has a time")
        }
    }
}
