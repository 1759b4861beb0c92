import FolioCore
import FolioProviderWebDAV
import FolioTestServers
import Foundation
import SystemPackage
import XCTest

/// What a provider test over a real server needs: a private Apache with the collection `/dav/` that holds the
/// containers, and a throwaway state folder. ``stop()`` (from the test's `tearDown`, so also after a failure) ends
/// the server and removes the folder.
final class ApacheDriveFixture {
    /// The server.
    let server: ApacheServer
    /// The state folder: the providers' state, and files to upload.
    let state: URL

    /// Starts the server, makes `/dav/` on it and the state folder.
    init() throws {
        server = try startOrSkip { try ApacheServer() }
        state = FileManager.default.temporaryDirectory.appendingPathComponent("folio-provider-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            let made = try server.request("MKCOL", "/dav/").status
            guard made == 201 else { throw FolioError.io("MKCOL /dav/ answered \(made)") }
        } catch {
            stop()
            throw error
        }
    }

    /// A provider of `/dav/` keeping its state in the state folder, or in its own folder `device` below it (two
    /// devices).
    func provider(device: String? = nil) throws -> WebDAVProvider {
        var folder = state
        if let device {
            folder = state.appendingPathComponent(device)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        return try WebDAVProvider(
            configuration: WebDAVConfiguration(url: server.baseURL.absoluteString + "/dav/"), stateFolder: folder)
    }

    /// Where the server keeps the Drive's file `name`.
    func driveFile(_ name: String) -> String {
        server.documentRoot + "/dav/com.folio.drive/" + name
    }

    /// Ends the server and removes the state folder; safe to call more than once.
    func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: state)
    }
}

/// A test case over an ``ApacheDriveFixture`` made for each test and stopped after it.
class ApacheProviderTestCase: XCTestCase {
    /// The server and state folder of the running test.
    var fixture: ApacheDriveFixture!
    /// The fixture's server.
    var server: ApacheServer { fixture.server }
    /// The fixture's state folder.
    var state: URL { fixture.state }

    override func setUpWithError() throws {
        fixture = try ApacheDriveFixture()
    }

    /// A file in the state folder holding `text`, to upload.
    func content(_ text: String) throws -> FilePath {
        let file = state.appendingPathComponent("content-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        return FilePath(file.path)
    }

    override func tearDownWithError() throws {
        fixture?.stop()
    }
}
