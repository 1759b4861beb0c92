import FolioTestServers
import Foundation
import XCTest

/// A private wsgidav (PyPI `wsgidav` on `cheroot`) on a loopback port over a throwaway root, anonymous or with one
/// user (Basic auth only, no Digest). It runs from the virtual environment `scripts/bootstrap` makes at
/// ``venv`` (`/opt/folio-test-venv`; Debian's Python refuses a plain `pip install`). Dead properties are kept in a
/// shelve file in the server's folder, so they outlive a restart, even a kill -9 where Python has `dbm.gnu`
/// (Debian `python3-gdbm`; its fallback, Berkeley DB's ndbm, is never synced: ``flushesProperties``). Started as a
/// child process, ready when it serves a file of its own root; ``stop()`` ends it and removes its folder.
///
/// What wsgidav (4.x on cheroot, measured by `WsgiDAVServerTests`) sends and does:
/// - ETags: unquoted `inode-mtime-size` in PROPFIND replies (not RFC 9110 syntax: quote it before sending it back),
///   the same value quoted in the `ETag` header of `GET`/`PUT` replies; none on collections. `getlastmodified` on
///   files and collections. Elements prefixed `ns0:`, plus `creationdate` and quota properties.
/// - No `getctag`, no collection ETag, `sync-collection` REPORT: 405 Method Not Allowed.
/// - Conditional requests honoured: `PUT` with a wrong `If-Match` or `If-None-Match: *` on an existing file, and
///   `DELETE` with a wrong `If-Match`: 412, nothing changed; `If-Match` with the listed ETag quoted: accepted;
///   `MOVE` with `Overwrite: F` onto a file: 412.
/// - Dead properties (`PROPPATCH` in a custom namespace) kept, and moved with the file (with a property manager
///   configured, as here; wsgidav's default configuration has none and refuses them).
final class WsgiDAVServer: WebDAVTestServer {
    /// Where `scripts/bootstrap` installs wsgidav and cheroot.
    static let venv = "/opt/folio-test-venv"

    /// Python in ``venv`` has `dbm.gnu`, so the property shelve is synced at every write (a kill loses none).
    static var flushesProperties: Bool {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: venv + "/bin/python")
        python.arguments = ["-c", "import dbm.gnu"]
        python.standardOutput = FileHandle.nullDevice
        python.standardError = FileHandle.nullDevice
        guard (try? python.run()) != nil else { return false }
        python.waitUntilExit()
        return python.terminationStatus == 0
    }

    /// The folder the server serves, as `/`.
    let documentRoot: String
    /// `http://127.0.0.1:PORT`.
    let baseURL: URL
    /// curl set up with the server's credentials.
    let curl: Curl
    private let folder: String
    private let server: ServerProcess

    /// Starts a server (trying a few ports), waiting at most 20 s for it to answer (it takes about a second);
    /// with `user`, only that user and password are let in.
    init(user: (name: String, password: String)? = nil) throws {
        let program = Self.venv + "/bin/wsgidav"
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw XCTSkip("wsgidav is not installed in \(Self.venv) (scripts/bootstrap installs it)")
        }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("folio-wsgidav-\(UUID().uuidString.prefix(8))").path
        let documentRoot = folder + "/root"
        self.folder = folder
        self.documentRoot = documentRoot
        do {
            try FileManager.default.createDirectory(atPath: documentRoot, withIntermediateDirectories: true)
            var curl = Curl(scratch: folder)
            if let user { curl.credentials = Curl.Credentials(user: user.name, password: user.password) }
            self.curl = curl
            let log = folder + "/wsgidav.log"
            server = try ServerProcess.start(
                name: "wsgidav", documentRoot: documentRoot, curl: curl, timeout: 20,
                log: { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "no log" }
            ) { port in
                let config = folder + "/wsgidav.json"
                let data = try Self.configuration(folder: folder, root: documentRoot, port: port, user: user)
                guard FileManager.default.createFile(
                    atPath: config, contents: data, attributes: [.posixPermissions: 0o600])
                else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: config]) }
                return try ServerProcess.process(program, ["--config", config], logFile: log)
            }
            baseURL = server.baseURL
        } catch let unavailable as ServerUnavailable {
            try? FileManager.default.removeItem(atPath: folder)
            throw XCTSkip(unavailable.reason)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// Kills the server and its children at once (SIGKILL), keeping its folder and port for ``start()``.
    func kill() {
        server.kill()
    }

    /// Starts the server again after ``kill()``, on the same port and root, and waits until it answers.
    func start() throws {
        try server.start()
    }

    /// Ends the server and removes its folder.
    func stop() {
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The server's configuration (JSON, which wsgidav reads as JSON5).
    private static func configuration(
        folder: String, root: String, port: Int, user: (name: String, password: String)?
    ) throws -> Data {
        let users: Any = user.map { [$0.name: ["password": $0.password]] } ?? true
        let configuration: [String: Any] = [
            "host": "127.0.0.1",
            "port": port,
            "provider_mapping": ["/": root],
            "simple_dc": ["user_mapping": ["*": users]],
            "http_authenticator": ["accept_basic": true, "accept_digest": false, "default_to_digest": false],
            "property_manager": [
                "class": "wsgidav.prop_man.property_manager.ShelvePropertyManager",
                "kwargs": ["storage_path": folder + "/properties.shelve"],
            ],
            "lock_storage": true,
            "dir_browser": ["enable": false],
            "verbose": 1,
        ]
        return try JSONSerialization.data(
            withJSONObject: configuration, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}
