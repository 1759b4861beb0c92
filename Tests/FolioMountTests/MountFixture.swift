import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// A real Folio mount for a test: a temporary remote, state folder and mountpoint, and a `folio mount
/// --foreground` daemon process. ``tearDown()`` always unmounts and ends the daemon, also after a failure.
final class MountFixture {
    let root: String
    let remote: String
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

    init(extraArguments: [String] = [], remote: String? = nil, launcher: [String] = []) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-test-\(UUID().uuidString.prefix(8))").path
        self.remote = remote ?? root + "/remote"
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

    /// The environment every `folio` process of this fixture runs with.
    var environment: [String: String] { ["XDG_RUNTIME_DIR": runtime] }

    /// Starts the daemon and waits (bounded) until the mount answers.
    func start(file: StaticString = #filePath, line: UInt = #line) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher.first ?? Self.executable)
        process.arguments = launcher.dropFirst() + (launcher.isEmpty ? [] : [Self.executable])
            + ["mount", "--foreground", "--remote", remote, "--state", state, "--log-level", "debug"]
            + extraArguments + [mountpoint]
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
        let up = Shell.waitUntil(timeout: 60) {
            guard process.isRunning else { return false }
            return self.isMounted && self.folio("status \(self.mountpoint)").status == 0
        }
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

    /// The text of a Drive document on the remote, or `nil` if it is not there.
    func remoteText(_ relative: String) -> String? {
        try? String(contentsOfFile: remotePath(relative), encoding: .utf8)
    }

    /// Path of a Drive document on the remote.
    func remotePath(_ relative: String, container: String = "com.folio.drive") -> String {
        remote + "/" + container + "/" + relative
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

    /// Stops everything and removes the temporary folders.
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
    }

    enum FixtureError: Error { case notMounted }
}

/// Base class of the mount tests: one fixture per test, torn down whatever happens.
class MountTestCase: XCTestCase {
    var fixture: MountFixture!

    /// Arguments added to `folio mount` for every test of the class.
    var mountArguments: [String] { [] }

    /// A command the daemon of every test of the class is started through (`setpriv …`), or empty.
    var daemonLauncher: [String] { [] }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/fuse"), "needs /dev/fuse")
        fixture = try MountFixture(extraArguments: mountArguments, launcher: daemonLauncher)
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
            }
        }
        try LocalProvider.initialize(at: FilePath(fixture.remote))
        try prepareRemote()
        try fixture.start()
    }

    /// Called before the daemon starts, to fill the remote.
    func prepareRemote() throws {}

}
