import ArgumentParser
import FolioDaemon

/// `folio replay-helper MOUNTPOINT DEVICE`: started by the daemon, never by hand (hidden from help). Makes the
/// system calls that replay remote changes on the mount, so inotify watchers of the mount see them.
struct ReplayHelperCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay-helper", abstract: "Replay remote changes on a mount (started by the daemon).",
        shouldDisplay: false)

    @Argument(help: "The mountpoint.")
    var mountpoint: String

    @Argument(help: "The mount's device, major:minor.")
    var device: String

    func run() throws {
        let status = Daemon.serveReplayHelper(mountpoint: mountpoint, device: device)
        if status != 0 { throw ExitCode(status) }
    }
}
