import FolioTestServers
import Foundation
import XCTest

/// Base class of the mount tests over a WebDAV server: a private Apache (``ApacheServer``) on loopback, with the
/// collection `/folio/` that the mounts use as their remote (`--remote http://127.0.0.1:PORT/folio/`), and Folio
/// mounts of it started by ``mount(_:file:line:)``. Every mount and the server are ended whatever happens (the
/// mounts first), and a failed test prints the daemons' logs.
class WebDAVMountTestCase: XCTestCase {
    /// The server of the test.
    var server: ApacheServer!

    /// The account the server lets in (Basic auth on everything), or `nil` for an anonymous server.
    var serverAccount: ApacheServer.Credentials? { nil }

    /// Whether the server serves `https` (with a self-signed certificate, ``ApacheServer/caFile``).
    var serverUsesTLS: Bool { false }

    /// The collection the mounts use as their remote, from the server's root.
    static let collection = "/folio/"

    /// The address the mounts are given: `http[s]://127.0.0.1:PORT/folio/`.
    var remoteURL: String { server.baseURL.absoluteString + Self.collection }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/fuse"), "needs /dev/fuse")
        let server = try startOrSkip { try ApacheServer(basicAuth: serverAccount, tls: serverUsesTLS) }
        self.server = server
        addTeardownBlock { server.stop() }
        let made = try server.request("MKCOL", Self.collection)
        XCTAssertEqual(made.status, 201, made.text)
    }

    /// Starts a Folio mount of the server ("a device", with a state folder of its own), polling it every second,
    /// with `arguments` added to `folio mount`; it is ended after the test, before the server.
    func mount(_ arguments: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> MountFixture {
        let device = try MountFixture(extraArguments: ["--poll-interval", "1"] + arguments, remote: remoteURL)
        addTeardownBlock { device.tearDown() }
        addTeardownBlock { [weak self] in
            guard let self, let run = self.testRun, run.failureCount + run.unexpectedExceptionCount > 0 else { return }
            print("--- daemon log tail of \(self.name) (\(device.mountpoint)) ---\n" + String(device.log.suffix(6000)))
        }
        try device.start(file: file, line: line)
        return device
    }

    /// Where a Drive document is in the server's document root.
    func serverPath(_ relative: String) -> String {
        server.documentRoot + Self.collection + "com.folio.drive/" + relative
    }

    /// The text of a Drive document as the server has it, or `nil` if it has none.
    func serverText(_ relative: String) -> String? {
        try? String(contentsOfFile: serverPath(relative), encoding: .utf8)
    }

    /// The names in a folder of the server's Drive (`.DAV`, Apache's property store, left out), sorted.
    func serverNames(_ relative: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: serverPath(relative))) ?? []
        return names.filter { $0 != ".DAV" }.sorted()
    }

    /// The text of `relative` in `device`'s mount, or `nil` if it cannot be read.
    func text(_ device: MountFixture, _ relative: String) -> String? {
        try? String(contentsOfFile: device.path(relative), encoding: .utf8)
    }

    /// The names in a folder of `device`'s mount, sorted (`nil` if it cannot be listed).
    func names(_ device: MountFixture, _ relative: String) -> [String]? {
        (try? FileManager.default.contentsOfDirectory(atPath: device.path(relative)))?.sorted()
    }
}
