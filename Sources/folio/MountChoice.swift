import FolioDaemon
import Foundation

/// Which mount a command that names no path inside one talks to: `--mount`, else the mount holding the current
/// folder, else the only Folio mount of this machine.
enum MountChoice {
    static func mountpoint(given: String?) throws -> String {
        if let given {
            guard let (mountpoint, _) = ControlClient.mountpoint(containing: given) else {
                throw CLIError(ControlClient.notControllableMessage(for: given))
            }
            return mountpoint
        }
        if let (here, _) = ControlClient.mountpoint(containing: FileManager.default.currentDirectoryPath) {
            return here
        }
        let running = ControlClient.folioMountpoints().filter { ControlClient.runningMount(at: $0) != nil }
        guard running.count == 1, let only = running.first else {
            throw CLIError(running.isEmpty
                ? "no Folio mount is running"
                : "several Folio mounts are running (\(running.joined(separator: ", "))): say which with --mount")
        }
        return only
    }
}
