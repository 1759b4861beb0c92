import ArgumentParser
import FolioCore
import FolioDaemon
import FolioProviderLocal
import Foundation
import Logging
import SystemPackage

/// `folio mount`: mounts a remote and returns once the mount is up.
struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount", abstract: "Mount a remote folder (the local provider) at MOUNTPOINT.")

    @Option(name: .long, help: "The remote folder (an empty or new folder is initialized with the Drive container).")
    var remote: String

    @Option(name: .long, help: "Where the metadata and content cache live (default: ~/.local/state/folio/…).")
    var state: String?

    @Flag(name: .long, help: "Stay in the foreground and log to standard error.")
    var foreground = false

    @Flag(name: .long, help: "Let other users use the mount (permissions are enforced from the mode bits).")
    var allowOther = false

    @Option(name: .long, help: "Seconds a second writer waits for the first before EBUSY.")
    var writeWait: Double = 10

    @Option(name: .long, help: "Seconds between polls of the remote for changes.")
    var pollInterval: Double = 15

    @Option(name: .long, help: "Seconds local changes must pause before uploads start (at most 3 s of waiting).")
    var uploadDelay: Double = 0.3

    @Option(name: .long, help: .hidden)
    var groupWriteDelayMs: Int = 20

    @Option(name: .long, help: "Simulated network latency per provider call, in milliseconds.")
    var simulateLatencyMs: Int = 0

    @Option(name: .long, help: "Simulated bandwidth in bytes per second (0 = unlimited).")
    var simulateBandwidth: Int64 = 0

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    @Flag(name: .long, help: "libfuse debug output.")
    var debug = false

    @Option(name: .long, help: .hidden)
    var readyFD: Int32?

    @Argument(help: "The folder to mount on.")
    var mountpoint: String

    func validate() throws {
        guard writeWait >= 0, pollInterval > 0, uploadDelay >= 0, groupWriteDelayMs >= 0 else { throw ValidationError("durations must be positive") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \(logLevel)") }
    }

    func run() throws {
        let remote = RuntimePaths.canonical(self.remote)
        let mountpoint = RuntimePaths.canonical(self.mountpoint)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: mountpoint, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError("mountpoint \(mountpoint) is not a folder")
        }
        let stateDirectory = state.map(RuntimePaths.canonical) ?? RuntimePaths.defaultStateDirectory(forRemote: remote).string
        if !foreground {
            var arguments = [
                "mount", "--remote", remote, "--state", stateDirectory, "--write-wait", "\(writeWait)",
                "--poll-interval", "\(pollInterval)", "--upload-delay", "\(uploadDelay)",
                "--group-write-delay-ms", "\(groupWriteDelayMs)",
                "--simulate-latency-ms", "\(simulateLatencyMs)",
                "--simulate-bandwidth", "\(simulateBandwidth)", "--log-level", logLevel,
            ]
            if allowOther { arguments.append("--allow-other") }
            if debug { arguments.append("--debug") }
            try Background.spawnAndWait(arguments: arguments + [mountpoint], stateDirectory: stateDirectory)
            print("Folio mounted \(remote) at \(mountpoint)")
            return
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            return handler
        }
        let logger = Logger(label: "folio")
        let configuration = DaemonConfiguration(
            remote: FilePath(remote), stateDirectory: FilePath(stateDirectory), mountpoint: FilePath(mountpoint),
            allowOther: allowOther, writeWaitTimeout: .milliseconds(Int(writeWait * 1000)),
            pollInterval: .milliseconds(Int(pollInterval * 1000)),
            uploadQuietPeriod: .milliseconds(Int(uploadDelay * 1000)),
            groupWriteDelay: .milliseconds(groupWriteDelayMs),
            simulation: NetworkSimulation(latencyMilliseconds: simulateLatencyMs, bandwidthBytesPerSecond: simulateBandwidth),
            debug: debug)
        let readyFD = self.readyFD
        let status = Daemon(configuration: configuration, logger: logger).run { result in
            switch result {
            case .success:
                Background.signalReady(readyFD, message: "ready")
            case .failure(let error):
                logger.error("mount failed: \(error)")
                Background.signalReady(readyFD, message: "error: \(error)")
            }
        }
        if status != 0 { throw ExitCode(status) }
    }
}

/// An error message for the user, printed without a stack of types.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
