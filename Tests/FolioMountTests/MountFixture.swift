import FolioCore
import FolioProviderLocal
import FolioTestServers
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import SystemPackage
import XCTest

/// A real Folio mount for a test: a temporary remote, state folder and mountpoint, and a `folio mount
/// --foreground` daemon process. ``tearDown()`` always unmounts and ends the daemon, also after a failure.
///
/// The remote is a folder of the local provider, or (``TestRemote/apache``) a private Apache WebDAV server the
/// fixture starts and ends after the mount; either way its documents are plain files in ``remoteFolder``.
final class MountFixture {
    let root: String
    /// What `--remote` is given: a folder, or a server's address (`http://…`).
    let remote: String
    /// The folder that holds the remote's containers as plain folders: the local provider's remote folder, or the
    /// server's collection in its document root.
    let remoteFolder: String
    /// The WebDAV server this fixture started (``TestRemote/apache``), ended after the mount.
    private(set) var server: ApacheServer?
    let state: String
    let mountpoint: String
    let runtime: String
    var extraArguments: [String]
    /// A command the daemon is started through (`setpriv …`), or empty.
    var launcher: [String]
    private(set) var daemon: Process?
    private var logHandle: FileHandle?

    /// The `folio` executable built next to the test bundle.
    static var executable: String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments.first { $0.contains(".xctest") } ?? CommandLine.arguments[0])
        var directory = testBinary.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("folio").path),
              directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("folio").path
    }

    /// The collection of an Apache server (``TestRemote/apache``) that is the remote, from the server's root.
    static let serverCollection = "/folio/"

    /// A fixture over `remote` (a folder or a server's address) if given, or else over a new remote of `kind`: a
    /// folder in the fixture's own, or an Apache server started now (ended by ``tearDown()``).
    init(
        extraArguments: [String] = [], remote: String? = nil, kind: TestRemote = .local, launcher: [String] = []
    ) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-test-\(UUID().uuidString.prefix(8))").path
        if let remote {
            self.remote = remote
            remoteFolder = remote
        } else if kind == .apache {
            let server = try startOrSkip { try ApacheServer() }
            let made: (status: Int, text: String)
            do {
                let reply = try server.request("MKCOL", Self.serverCollection)
                made = (reply.status, reply.text)
            } catch {
                server.stop()
                throw error
            }
            guard made.status == 201 else {
                server.stop()
                throw FixtureError.serverRefused("MKCOL \(Self.serverCollection): \(made.status) \(made.text)")
            }
            self.server = server
            self.remote = server.baseURL.absoluteString + Self.serverCollection
            remoteFolder = server.documentRoot + Self.serverCollection.dropLast()
        } else {
            self.remote = root + "/remote"
            remoteFolder = self.remote
        }
        state = root + "/state"
        mountpoint = root + "/mnt"
        runtime = root + "/run"
        self.extraArguments = extraArguments
        self.launcher = launcher
        // (A remote that is a server's address, `http://…`, is no folder to make.)
        for directory in [state, mountpoint, runtime] + (self.remote.contains("://") ? [] : [self.remote]) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
    }

    var logPath: String { root + "/daemon.log" }

    /// The environment every `folio` process of this fixture runs with: its own runtime folder, its own
    /// desktop cache (``thumbnails``) and data folder (``recentFiles``), never the user's.
    var environment: [String: String] {
        ["XDG_RUNTIME_DIR": runtime, "XDG_CACHE_HOME": root + "/cache", "XDG_DATA_HOME": root + "/data"]
            .merging(extraEnvironment) { $1 }
    }

    /// The desktop's list of recent files the daemon adds to (`$XDG_DATA_HOME/recently-used.xbel`).
    var recentFiles: String { root + "/data/recently-used.xbel" }

    /// More environment for the daemon and the CLI (`XDG_CURRENT_DESKTOP` for a desktop test).
    var extraEnvironment: [String: String] = [:]

    /// The thumbnail cache (Thumbnail Managing Standard) the daemon keeps for this mount's paths.
    var thumbnails: String { root + "/cache/thumbnails" }

    /// Whether the remote is a WebDAV server (`http://…`).
    var isServer: Bool { remote.contains("://") }

    /// The arguments of `folio mount`. A WebDAV server pushes no changes, so a mount of one polls every second
    /// whatever `--poll-interval` a test gave (a long one leaves remote changes to the local provider's push).
    var mountArguments: [String] {
        var extra = extraArguments
        if isServer, let at = extra.firstIndex(of: "--poll-interval"), at + 1 < extra.count { extra[at + 1] = "1" }
        return ["mount", "--foreground", "--remote", remote, "--state", state, "--log-level", "debug"] + extra
            + [mountpoint]
    }

    /// Starts the daemon and waits (bounded) until the mount answers.
    func start(file: StaticString = #filePath, line: UInt = #line) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher.first ?? Self.executable)
        process.arguments = launcher.dropFirst() + (launcher.isEmpty ? [] : [Self.executable]) + mountArguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        handle.seekToEndOfFile()
        logHandle = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        daemon = process
        // (A daemon that ended, refusing its arguments, ends the wait.)
        let up = Shell.waitUntil(timeout: 60) {
            guard process.isRunning else { return true }
            return self.isMounted && self.folio("status \(self.mountpoint)").status == 0
        } && process.isRunning
        if !up {
            XCTFail("mount did not come up; log:\n\(log)", file: file, line: line)
            throw FixtureError.notMounted
        }
    }

    /// Whether the mountpoint is a FUSE mount now.
    var isMounted: Bool {
        let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first == Substring(mountpoint) }
    }

    /// The daemon's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Runs the `folio` CLI with this fixture's environment.
    @discardableResult
    func folio(_ arguments: String, timeout: TimeInterval = 60) -> CommandResult {
        Shell.run("'\(Self.executable)' \(arguments)", timeout: timeout, environment: environment)
    }

    /// `folio status --json` of the mount.
    func status(_ path: String? = nil) -> [String: Any] {
        let result = folio("status --json '\(path ?? mountpoint)'")
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
    }

    /// Pending uploads, or nil if the daemon did not answer.
    var pendingUploads: Int? {
        (status()["summary"] as? [String: Any])?["pendingUploads"] as? Int
    }

    /// Waits until every change reached the provider.
    func waitForUploads(timeout: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line) {
        let done = Shell.waitUntil(timeout: timeout) { self.pendingUploads == 0 }
        XCTAssertTrue(done, "uploads did not finish; status: \(status())\nlog tail:\n\(log.suffix(3000))", file: file, line: line)
    }

    /// Path in the mount.
    func path(_ relative: String) -> String { mountpoint + "/" + relative }

    /// Puts a network simulation in force on the remote (`NetworkSimulation` JSON, read by the provider at its
    /// next call), or, with `nil`, takes it away.
    func simulateNetwork(_ json: String?) throws {
        let path = remote + "/.folio/simulate.json"
        guard let json else { return try FileManager.default.removeItem(atPath: path) }
        try json.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The text of a document on the remote (in the Drive unless `container` says otherwise), or `nil` if none.
    func remoteText(_ relative: String, container: String = "com.folio.drive") -> String? {
        try? String(contentsOfFile: remotePath(relative, container: container), encoding: .utf8)
    }

    /// Path of a Drive document on the remote.
    func remotePath(_ relative: String, container: String = "com.folio.drive") -> String {
        remoteFolder + "/" + container + "/" + relative
    }

    /// The item id the remote keeps for a Drive document: the last field of the local provider's `user.folio`
    /// attribute (`<rev> <mode> <stamp> <id>`), or the Folio `id` dead property the server keeps; `nil` if none.
    func remoteItemID(_ relative: String) -> String? {
        guard server != nil else {
            let value = Shell.run("getfattr --only-values -n user.folio '\(remotePath(relative))'").stdout
            return value.split(separator: " ").last.map(String.init)
        }
        return serverProperty("id", of: relative)
    }

    /// The value of one of Folio's dead properties (`id`, `mode`, `symlink`, …) the server keeps for a Drive
    /// document, read with `PROPFIND`; `nil` without a server, or if the document has none.
    func serverProperty(_ name: String, of relative: String) -> String? {
        guard let server else { return nil }
        let body = #"<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop>"#
            + #"<F:\#(name) xmlns:F="urn:folio:properties:1"/></D:prop></D:propfind>"#
        let path = Self.serverCollection + "com.folio.drive/" + relative.split(separator: "/")
            .map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0) }
            .joined(separator: "/")
        guard let reply = try? server.request("PROPFIND", path, headers: ["Depth: 0"], body: Data(body.utf8)),
            reply.status == 207
        else { return nil }
        return Self.folioProperty(name, inMultistatus: reply.body)
    }

    /// The text of the element `name` in Folio's namespace in a `PROPFIND` answer (a found property: its status is
    /// the first in the answer), read with a namespace-aware parser.
    private static func folioProperty(_ name: String, inMultistatus body: Data) -> String? {
        final class Reader: NSObject, XMLParserDelegate {
            let wanted: String
            var text: String?
            init(_ wanted: String) { self.wanted = wanted }
            var inside = false
            func parser(
                _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]
            ) {
                inside = name == wanted && namespaceURI == "urn:folio:properties:1" && text == nil
                if inside { text = "" }
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) {
                if inside { text? += string }
            }
            func parser(
                _ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?
            ) {
                inside = false
            }
        }
        let parser = XMLParser(data: body)
        parser.shouldProcessNamespaces = true
        let reader = Reader(name)
        parser.delegate = reader
        _ = parser.parse()
        return reader.text.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Sets the mode of a Drive document on the remote, as a person or another client would: `chmod` in a remote
    /// folder, or Folio's `mode` property (`PROPPATCH`) on a server, which keeps no mode bits of its own.
    func setRemoteMode(_ relative: String, _ mode: String) throws {
        guard let server else {
            Shell.check("chmod \(mode) '\(remotePath(relative))'")
            return
        }
        handRemoteToServer()
        let body = #"<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>"#
            + #"<F:mode xmlns:F="urn:folio:properties:1">\#(mode)</F:mode></D:prop></D:set></D:propertyupdate>"#
        let reply = try server.request(
            "PROPPATCH", Self.serverCollection + "com.folio.drive/" + relative, body: Data(body.utf8))
        guard reply.status == 207 else { throw FixtureError.serverRefused("PROPPATCH \(relative): \(reply.status)") }
    }

    /// The names in a folder of a Drive document on the remote, sorted, without the server's own (Apache keeps
    /// dead properties in a `.DAV` folder beside the files); empty if there is no such folder.
    func remoteNames(_ relative: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: remotePath(relative))) ?? []
        return names.filter { server == nil || $0 != ".DAV" }.sorted()
    }

    /// Adds an app container to the remote: its folder, and its entry in the remote's list of containers (the local
    /// provider's manifest, or the WebDAV provider's `.folio-containers.json` resource in the server's collection).
    func addContainer(_ container: Container) throws {
        guard server != nil else { return try LocalProvider.addContainer(container, at: FilePath(remote)) }
        let manifest = URL(fileURLWithPath: remoteFolder + "/.folio-containers.json")
        var containers = (try? JSONDecoder().decode([Container].self, from: Data(contentsOf: manifest))) ?? []
        containers.removeAll { $0.id == container.id }
        containers.append(container)
        try JSONEncoder().encode(containers).write(to: manifest)
        try FileManager.default.createDirectory(
            atPath: remoteFolder + "/" + container.id.rawValue, withIntermediateDirectories: true)
        handRemoteToServer()
    }

    /// Hands what a test wrote into the server's document root to the server's user (`www-data`), so the server
    /// can change and delete it as it can what it made; nothing to do for a local remote.
    func handRemoteToServer() {
        guard let server else { return }
        Shell.check("chown -R www-data:www-data '\(server.documentRoot)'")
    }

    /// Ends the daemon with `kill -9` (no cleanup at all) and clears the dead mount. Returns whether the daemon
    /// ended within 20 s; one that did not (a thread stuck in a request to its own mount) is freed by aborting
    /// the mount's connection (`umount -f`), so the run goes on.
    @discardableResult
    func kill9() -> Bool {
        guard let daemon else { return true }
        kill(daemon.processIdentifier, SIGKILL)
        let ended = Shell.waitUntil(timeout: 20) { !daemon.isRunning }
        if !ended { Shell.run("umount -f '\(mountpoint)' 2>/dev/null; true") }
        daemon.waitUntilExit()
        self.daemon = nil
        Shell.run("fusermount3 -u -z '\(mountpoint)' 2>/dev/null; umount -l '\(mountpoint)' 2>/dev/null; true")
        Shell.waitUntil(timeout: 10) { !self.isMounted }
        return ended
    }

    /// Unmounts cleanly and waits for the daemon to exit.
    func stop() {
        guard let daemon else { return }
        if isMounted { folio("unmount '\(mountpoint)'", timeout: 30) }
        if !Shell.waitUntil(timeout: 20, { !daemon.isRunning }) {
            kill(daemon.processIdentifier, SIGKILL)
        }
        daemon.waitUntilExit()
        self.daemon = nil
    }

    /// Stops everything (the mount, then the server if the fixture started one) and removes the temporary folders.
    func tearDown() {
        if let daemon, daemon.isRunning {
            kill(daemon.processIdentifier, SIGTERM)
            if !Shell.waitUntil(timeout: 10, { !daemon.isRunning }) { kill(daemon.processIdentifier, SIGKILL) }
            daemon.waitUntilExit()
        }
        daemon = nil
        Shell.run("fusermount3 -u -z '\(mountpoint)' 2>/dev/null; true")
        Shell.waitUntil(timeout: 10) { !self.isMounted }
        try? logHandle?.close()
        if !isMounted { try? FileManager.default.removeItem(atPath: root) }
        server?.stop()
        server = nil
    }

    enum FixtureError: Error {
        case notMounted
        case serverRefused(String)
    }
}

/// Base class of the mount tests: one fixture per test, torn down whatever happens. A subclass that overrides
/// ``remote`` runs every test of its class over that kind of remote (`BatteryOverWebDAV.swift`).
class MountTestCase: XCTestCase {
    var fixture: MountFixture!

    /// The kind of remote the tests of the class mount: the local provider unless a subclass says otherwise.
    class var remote: TestRemote { .local }

    /// Skips the test when the class runs over a WebDAV server: what it checks needs the local provider (`why`).
    func skipOverWebDAV(_ why: String) throws {
        if Self.remote == .apache { throw XCTSkip("local provider only: \(why)") }
    }

    /// Arguments added to `folio mount` for every test of the class.
    var mountArguments: [String] { [] }

    /// A command the daemon of every test of the class is started through (`setpriv …`), or empty.
    var daemonLauncher: [String] { [] }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/fuse"), "needs /dev/fuse")
        fixture = try MountFixture(extraArguments: mountArguments, kind: Self.remote, launcher: daemonLauncher)
        addTeardownBlock { [fixture] in fixture?.tearDown() }
        // Teardown blocks run last-in first-out, before tearDown(): show the log of a failed test while it exists.
        addTeardownBlock { [weak self, fixture] in
            guard let self, let fixture, let run = self.testRun, run.failureCount + run.unexpectedExceptionCount > 0
            else { return }
            print("--- daemon log tail of \(self.name) ---\n" + String(fixture.log.suffix(6000)))
            // `FOLIO_FAILED_LOGS=DIR` keeps the whole log of each failed test there.
            if let folder = ProcessInfo.processInfo.environment["FOLIO_FAILED_LOGS"] {
                try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let name = self.name.filter { $0.isLetter || $0.isNumber } + "-\(getpid()).log"
                try? FileManager.default.copyItem(atPath: fixture.logPath, toPath: folder + "/" + name)
                if let server = fixture.server {  // and the server's access log, over WebDAV
                    try? FileManager.default.copyItem(
                        atPath: server.accessLogPath, toPath: folder + "/" + name + ".access")
                }
            }
        }
        if Self.remote == .local {
            try LocalProvider.initialize(at: FilePath(fixture.remote))
        } else {
            // The Drive's collection, as an initialized local remote has its folder.
            try FileManager.default.createDirectory(atPath: fixture.remotePath(""), withIntermediateDirectories: true)
        }
        try prepareRemote()
        fixture.handRemoteToServer()
        try fixture.start()
    }

    /// Called before the daemon starts, to fill the remote.
    func prepareRemote() throws {}

}
