import ArgumentParser
import FolioCore
import FolioDaemon
import Foundation
import Logging
import SystemPackage

/// `folio mount`: mounts a remote and returns once the mount is up.
struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount", abstract: "Mount a remote (a folder, or a WebDAV server) at MOUNTPOINT.")

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The remote folder (an empty or new folder is initialized with the Drive container; a folder of "
                + "documents is adopted as the Drive, with Folio's files in its .folio/), or the address of a "
                + "WebDAV collection, http[s]://HOST[:PORT]/PATH/ (its containers are collections in it)."))
    var remote: String?

    @Option(name: .long, help: ArgumentHelp("The account on a WebDAV server (Basic auth).", valueName: "NAME"))
    var user: String?

    @Option(name: .long, help: ArgumentHelp(
        "A file holding the --user's password (first line), private to you (chmod 600); or set "
            + "\(PasswordFile.environmentVariable). Never on the command line.", valueName: "FILE"))
    var passwordFile: String?

    @Option(name: .long, help: ArgumentHelp(
        "Certificate authorities (PEM) to trust for an https:// server instead of the system's.", valueName: "PEM"))
    var caFile: String?

    @Flag(name: .long, help: "Allow sending the password over plain http:// to a host that is not this machine.")
    var insecure = false

    @Option(name: .long, help: "Show only this app container (its app view) instead of the full view.")
    var app: String?

    @Flag(name: .long, help: "An --app container the remote does not have yet is made public (default: private).")
    var `public` = false

    @Option(name: .long, help: ArgumentHelp(
        "The display name of an --app container the remote does not have yet (default: its id).", valueName: "NAME"))
    var displayName: String?

    @Option(name: .long, help: ArgumentHelp(
        "Mount the --app view from the daemon of this running mount (one state, several views).",
        valueName: "MOUNTPOINT"))
    var of: String?

    @Option(name: .long, help: "Where the metadata and content cache live (default: ~/.local/state/folio/…).")
    var state: String?

    @Flag(name: .long, help: "Stay in the foreground and log to standard error.")
    var foreground = false

    @Flag(name: .long, help: "Let other users use the mount (permissions are enforced from the mode bits).")
    var allowOther = false

    @Option(name: .long, help: "Seconds a second writer waits for the first before EBUSY.")
    var writeWait: Double = 10

    @Option(name: .long, help: ArgumentHelp(
        "Seconds between polls of the remote for changes (default: 1, or 30 where the provider pushes changes).",
        valueName: "SECONDS"))
    var pollInterval: Double?

    @Flag(name: .long, help: .hidden)
    var noPush = false

    @Option(name: .long, help: "Seconds local changes must pause before uploads start (at most 3 s of waiting).")
    var uploadDelay: Double = 0.3

    @Option(name: .long, help: .hidden)
    var groupWriteDelayMs: Int = 20

    /// Seconds after a document left its name in which a new file there takes it over (editors' saves).
    @Option(name: .long, help: .hidden)
    var saveWindow: Double = 3

    @Option(name: .long, help: ArgumentHelp(
        "Most content kept locally: a size (500M, 10G) or a share of the free space (25%); least recently used "
            + "clean, unpinned, closed files are evicted beyond it.", valueName: "LIMIT"))
    var cacheLimit: String = "50%"

    @Option(name: .long, help: ArgumentHelp(
        "Programs that never download, by executable name, comma-separated: they see names, types, thumbnails and "
            + "the content that is here; opening a placeholder fails for them with EAGAIN. Default: the desktop "
            + "indexers (tracker-extract-3, tracker-miner-fs-3, localsearch-3, localsearch-extractor-3, baloo_file, "
            + "baloo_file_extractor); an empty list lets them download.", valueName: "NAMES"))
    var indexers: String?

    @Option(name: .long, help: "Simulated network latency per provider call, in milliseconds.")
    var simulateLatencyMs: Int = 0

    @Option(name: .long, help: "Simulated bandwidth in bytes per second (0 = unlimited).")
    var simulateBandwidth: Int64 = 0

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    @Flag(name: .long, help: "libfuse debug output.")
    var debug = false

    @Flag(name: .long, help: """
        List the whole tree in the background after mounting, a few folders at a time (nothing is downloaded), \
        so a later walk of it is answered from memory.
        """)
    var prefetchListing = false

    @Option(name: .long, help: .hidden)
    var readyFD: Int32?

    @Argument(help: "The folder to mount on.")
    var mountpoint: String

    func validate() throws {
        if (`public` || displayName != nil) && app == nil {
            throw ValidationError("--public and --display-name describe the container of --app ID")
        }
        if let displayName, displayName.isEmpty || displayName.contains("/") || displayName == "." || displayName == ".." {
            throw ValidationError("--display-name names a folder: not empty, no '/', not . or ..")
        }
        if of != nil {
            guard app != nil else { throw ValidationError("--of mounts an app view: give --app ID") }
            guard remote == nil, state == nil else {
                throw ValidationError(
                    "--of shares the running mount's remote and state: leave out --remote and --state")
            }
        } else if remote == nil {
            throw ValidationError("give --remote DIR (or --of MOUNTPOINT to add a view to a running mount)")
        }
        if !RemoteLocation.isAddress(remote ?? "") {
            guard user == nil, passwordFile == nil, caFile == nil, !insecure else {
                throw ValidationError(
                    "--user, --password-file, --ca-file and --insecure are for a WebDAV remote "
                        + "(--remote http[s]://…)")
            }
        } else if simulateLatencyMs != 0 || simulateBandwidth != 0 {
            throw ValidationError("the network simulation is for a remote folder, not a WebDAV server")
        }
        guard writeWait >= 0, (pollInterval ?? 1) > 0, uploadDelay >= 0, groupWriteDelayMs >= 0, saveWindow >= 0
        else {
            throw ValidationError("durations must be positive")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \(logLevel)") }
        guard CacheLimit(parsing: cacheLimit) != nil else {
            throw ValidationError(
                "--cache-limit takes a size (500M, 10G, 1048576) or a percentage (25%), not '\(cacheLimit)'")
        }
    }

    func run() throws {
        let mountpoint = RuntimePaths.canonical(self.mountpoint)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: mountpoint, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError("mountpoint \(mountpoint) is not a folder")
        }
        if let running = ControlClient.runningMount(at: mountpoint) {
            throw CLIError("\(mountpoint) is already a Folio mount of \(running.remote ?? "another remote")")
        }
        if let of, let app {
            guard let (running, _) = ControlClient.mountpoint(containing: of) else {
                throw CLIError(ControlClient.notControllableMessage(for: of))
            }
            let response = try ControlClient.send(
                ControlRequest(
                    command: "attach", app: app, target: mountpoint, displayName: displayName,
                    isPublic: `public` ? true : nil),
                mountpoint: running)
            guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
            print("Folio mounted the app view of \(app) at \(mountpoint) (sharing the state of \(running))")
            return
        }
        let given = self.remote ?? ""
        let location = try remoteLocation(given)
        let remote = location.description
        let stateDirectory = state.map(RuntimePaths.canonical)
            ?? RuntimePaths.defaultStateDirectory(forRemote: remote, user: user).string
        if !foreground {
            // Only the password file's path reaches the daemon's command line (the environment goes as it is).
            var arguments = [
                "mount", "--remote", remote, "--state", stateDirectory, "--write-wait", "\(writeWait)",
                "--upload-delay", "\(uploadDelay)",
                "--group-write-delay-ms", "\(groupWriteDelayMs)", "--save-window", "\(saveWindow)",
                "--cache-limit", cacheLimit,
                "--simulate-latency-ms", "\(simulateLatencyMs)",
                "--simulate-bandwidth", "\(simulateBandwidth)", "--log-level", logLevel,
            ]
            if let indexers { arguments += ["--indexers", indexers] }
            if let user { arguments += ["--user", user] }
            if let passwordFile { arguments += ["--password-file", RuntimePaths.canonical(passwordFile)] }
            if let caFile { arguments += ["--ca-file", RuntimePaths.canonical(caFile)] }
            if insecure { arguments.append("--insecure") }
            if allowOther { arguments.append("--allow-other") }
            if let app { arguments += ["--app", app] }
            if `public` { arguments.append("--public") }
            if let displayName { arguments += ["--display-name", displayName] }
            if let pollInterval { arguments += ["--poll-interval", "\(pollInterval)"] }
            if noPush { arguments.append("--no-push") }
            if debug { arguments.append("--debug") }
            if prefetchListing { arguments.append("--prefetch-listing") }
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
        var configuration = DaemonConfiguration(
            remote: location, stateDirectory: FilePath(stateDirectory), mountpoint: FilePath(mountpoint),
            allowOther: allowOther, writeWaitTimeout: .milliseconds(Int(writeWait * 1000)),
            pollInterval: pollInterval.map { .milliseconds(Int($0 * 1000)) }, push: !noPush,
            uploadQuietPeriod: .milliseconds(Int(uploadDelay * 1000)),
            groupWriteDelay: .milliseconds(groupWriteDelayMs),
            debug: debug, view: app.map { .app(ContainerID($0)) } ?? .full,
            cacheLimit: CacheLimit(parsing: cacheLimit) ?? .default,
            saveWindow: .milliseconds(Int(saveWindow * 1000)),
            indexers: indexers.map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }) } ?? FileSystemConfiguration.knownIndexers)
        configuration.prefetchListing = prefetchListing
        configuration.simulateNetwork(
            latencyMilliseconds: simulateLatencyMs, bandwidthBytesPerSecond: simulateBandwidth)
        configuration.newContainerDisplayName = displayName
        configuration.newContainerIsPublic = `public`
        let readyFD = self.readyFD
        let status = Daemon(configuration: configuration, logger: logger).run { result in
            switch result {
            case .success:
                Background.signalReady(readyFD, message: "ready")
            case .failure(let error):
                logger.error("mount failed: \(error)")
                Background.signalReady(readyFD, message: "\(Background.failurePrefix)\(error)")
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
