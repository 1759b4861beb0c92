import Foundation

/// A server program run by a test as a child process on a random loopback port: started, known ready only once it
/// serves a file that exists in its own document root (so a server of another test that already holds the port is
/// never taken for it), killed and started again on the same port when a test needs an outage (``kill()``,
/// ``start()``), and ended by ``stop()`` (SIGTERM, then SIGKILL after a bounded wait). Not thread-safe: one test
/// drives it.
public final class ServerProcess {
    /// `http[s]://127.0.0.1:PORT`.
    public let baseURL: URL
    private let name: String
    private let port: Int
    private let documentRoot: String
    private let probe: Curl
    private let timeout: TimeInterval
    private let log: () -> String
    private let launch: (Int) throws -> Process
    private var process: Process?

    private init(
        name: String, scheme: String, port: Int, documentRoot: String, curl: Curl, timeout: TimeInterval,
        log: @escaping () -> String, launch: @escaping (Int) throws -> Process
    ) {
        self.name = name
        self.port = port
        self.documentRoot = documentRoot
        self.timeout = timeout
        self.log = log
        self.launch = launch
        baseURL = URL(string: "\(scheme)://127.0.0.1:\(port)")!
        var probe = curl
        probe.maxTime = 2
        self.probe = probe
    }

    /// The server could not be started; `log` (the end of its log) says why.
    public struct DidNotStart: Error, CustomStringConvertible {
        /// The program.
        public let name: String
        /// The end of its log.
        public let log: String
        public var description: String { "\(name) did not start: \(log)" }
    }

    /// Starts the program `launch(port)` makes, trying up to `attempts` random ports, and waits at most `timeout`
    /// seconds on each for it to serve a marker file put in `documentRoot` (requested with `curl`, so with its
    /// credentials and certificate authority). `log` reads the program's log for the error when it never answers.
    public static func start(
        name: String, scheme: String = "http", documentRoot: String, curl: Curl, attempts: Int = 5,
        timeout: TimeInterval = 15, log: @escaping () -> String, launch: @escaping (Int) throws -> Process
    ) throws -> ServerProcess {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else {
            throw ServerUnavailable("curl is not installed (scripts/bootstrap installs it)")
        }
        for _ in 0..<attempts {
            let server = ServerProcess(
                name: name, scheme: scheme, port: Int.random(in: 20_000..<40_000), documentRoot: documentRoot,
                curl: curl, timeout: timeout, log: log, launch: launch)
            if try server.launchAndWait() { return server }
        }
        throw DidNotStart(name: name, log: String(log().suffix(800)))
    }

    /// Starts the program again on the same port (after ``kill()``), waiting until it answers.
    public func start() throws {
        guard process?.isRunning != true else { return }
        guard try launchAndWait() else { throw DidNotStart(name: name, log: String(log().suffix(800))) }
    }

    /// Kills the program and all its children at once (SIGKILL to its process group: an outage, not a shutdown),
    /// and returns once it has exited. Its folder and port stay for ``start()``.
    public func kill() {
        guard let process else { return }
        if process.isRunning { Glibc.kill(-process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Ends the program: SIGTERM, and SIGKILL to its process group if it is still running 2 s later (Apache waits
    /// for open keep-alive connections for longer; a throwaway server need not).
    public func stop() {
        guard let process else { return }
        if process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { Glibc.kill(-process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Launches the program and polls until it serves a marker of its root (true), or it exits or the time is up
    /// (false, the program ended).
    private func launchAndWait() throws -> Bool {
        let marker = ".folio-ready-\(UUID().uuidString.prefix(8))"
        let markerPath = documentRoot + "/" + marker
        try Data("ready".utf8).write(to: URL(fileURLWithPath: markerPath))
        defer { try? FileManager.default.removeItem(atPath: markerPath) }
        let process = try launch(port)
        self.process = process
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            let reply = try? probe.request("GET", baseURL.absoluteString + "/" + marker)
            if reply?.status == 200 && reply?.text == "ready" { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        stop()
        return false
    }

    /// A process for `executable` with `arguments`, its output and errors appended to `logFile`. Foundation starts
    /// it in a process group of its own, so ``kill()`` reaches the children it forks.
    public static func process(_ executable: String, _ arguments: [String], logFile: String) throws -> Process {
        if !FileManager.default.fileExists(atPath: logFile) { try Data().write(to: URL(fileURLWithPath: logFile)) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logFile))
        log.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        return process
    }
}
