import Foundation

/// A server program run by a test as a child process on a random loopback port: started, known ready only once it
/// serves a file that exists in its own document root (so a server of another test that already holds the port is
/// never taken for it), and ended by ``stop()`` (SIGTERM, then SIGKILL after a bounded wait).
final class ServerProcess {
    /// The running program.
    let process: Process
    /// `http[s]://127.0.0.1:PORT`.
    let baseURL: URL

    private init(process: Process, baseURL: URL) {
        self.process = process
        self.baseURL = baseURL
    }

    /// The server could not be started; `log` (the end of its log) says why.
    struct DidNotStart: Error, CustomStringConvertible {
        /// The program.
        let name: String
        /// The end of its log.
        let log: String
        var description: String { "\(name) did not start: \(log)" }
    }

    /// Starts the program `launch(port)` makes, trying up to `attempts` random ports, and waits at most `timeout`
    /// seconds on each for it to serve a marker file put in `documentRoot` (requested with `curl`, so with its
    /// credentials and certificate authority). `log` reads the program's log for the error when it never answers.
    static func start(
        name: String, scheme: String = "http", documentRoot: String, curl: Curl, attempts: Int = 5,
        timeout: TimeInterval = 15, log: () -> String, launch: (Int) throws -> Process
    ) throws -> ServerProcess {
        let marker = ".folio-ready-\(UUID().uuidString.prefix(8))"
        let markerPath = documentRoot + "/" + marker
        try Data("ready".utf8).write(to: URL(fileURLWithPath: markerPath))
        defer { try? FileManager.default.removeItem(atPath: markerPath) }
        var probe = curl
        probe.maxTime = 2
        for _ in 0..<attempts {
            let port = Int.random(in: 20_000..<40_000)
            let baseURL = URL(string: "\(scheme)://127.0.0.1:\(port)")!
            let process = try launch(port)
            let started = ServerProcess(process: process, baseURL: baseURL)
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline {
                let reply = try? probe.request("GET", baseURL.absoluteString + "/" + marker)
                if reply?.status == 200 && reply?.text == "ready" { return started }
                Thread.sleep(forTimeInterval: 0.05)
            }
            started.stop()
        }
        throw DidNotStart(name: name, log: String(log().suffix(800)))
    }

    /// Ends the program: SIGTERM, and SIGKILL if it is still running 10 s later.
    func stop() {
        if process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// A process for `executable` with `arguments`, its output and errors appended to `logFile`.
    static func process(_ executable: String, _ arguments: [String], logFile: String) throws -> Process {
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
