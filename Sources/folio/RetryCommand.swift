import ArgumentParser
import FolioDaemon

/// `folio retry [PATH]`.
struct RetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry", abstract: "Retry uploads that failed (all of a mount, or those at or under PATH).",
        discussion: "An upload fails for good only for a reason that needs you (a name the remote refuses, "
            + "access denied); `folio status` says which and what to do. Once that is fixed, this uploads again "
            + "(so does the next mount). Uploads waiting for a failure that clears by itself (offline, no space) "
            + "are tried again at once.")

    @Argument(help: "A mountpoint or a path inside a mount (default: the current folder).")
    var path: String = "."

    func run() throws {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let response = try ControlClient.send(ControlRequest(command: "retry", path: relative), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        print(response.message ?? "done")
    }
}
