import ArgumentParser
import FolioCore
import FolioDaemon
import Foundation

/// `folio status [PATH] [--json]`.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the state of a mount, or of one item in it.")

    /// What a provider's error says when the server refused the account's credentials (HTTP 401).
    static let authenticationFailed = "authentication failed"

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Argument(help: "A mountpoint or a path inside a mount (default: the current folder).")
    var path: String = "."

    func run() throws {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let response = try ControlClient.send(ControlRequest(command: "status", path: relative), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(response), as: UTF8.self))
            return
        }
        print("mount:    \(response.mountpoint ?? mountpoint)")
        print("remote:   \(response.remote ?? "?")")
        print("daemon:   pid \(response.pid.map(String.init) ?? "?")")
        if let summary = response.summary {
            if let error = summary.lastProviderError, error.contains(Self.authenticationFailed) {
                print("provider: AUTHENTICATION FAILED: \(error)")
                print("          the server refuses the account: fix the user or the password (file), then "
                    + "`folio unmount \(response.mountpoint ?? mountpoint)` and mount again; changes are kept here "
                    + "until it lets you in")
            } else if summary.providerOnline {
                print("provider: online" + (summary.lastProviderError.map { " (last error: \($0))" } ?? ""))
            } else {
                let reason = summary.lastProviderError.map { error in
                    ": " + (error.hasPrefix("provider offline: ") ? String(error.dropFirst(18)) : error)
                }
                print("provider: OFFLINE\(reason ?? ""); uploads wait until it is back")
            }
            for limitation in summary.providerLimitations { print("LIMITED:  \(limitation)") }
            let needYou = summary.waitingForUser > 0 ? " (\(summary.waitingForUser) need you)" : ""
            print("uploads:  \(summary.pendingUploads) pending\(needYou), \(summary.uploadsInFlight) in flight")
            let states = summary.states.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            print("items:    \(states.joined(separator: ", "))")
            print("folders:  \(summary.foldersListed) listed, \(summary.foldersNotListed) not listed yet")
            // Retried by themselves, then those that need the user.
            for waiting in summary.waiting { print("WAITING:  \(waiting)") }
            for failure in summary.failures { print("FAILED:   \(failure)") }
            for failure in summary.readFailures { print("READ:     \(failure)") }
        }
        if let item = response.item {
            print("")
            print("item:     \(item.path.isEmpty ? "/" : item.path) (\(item.kind), \(item.size) bytes)")
            print("state:    \(item.state)\(item.pendingUpload ? ", upload pending" : "")")
            if let error = item.error { print("error:    \(error)") }
            if let waiting = item.waiting { print("waiting:  \(waiting)") }
            print("progress: \(item.progress)")
            print("id:       \(item.id) in \(item.container), version \(item.version ?? "none")")
            print("pinned:   \(item.pinned ? "yes" : "no")")
        }
    }
}
