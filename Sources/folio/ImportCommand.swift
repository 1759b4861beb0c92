import ArgumentParser
import FolioDaemon
import Foundation

/// `folio import SRC --app ID [--as NAME]`: the document picker's import mode.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Copy a document (from anywhere on this machine, or from the mount) into an app's container.",
        discussion: "The copy is a new document of the app's own (its bytes, mode, modification time and tags), "
            + "uploaded like any new file; the source is left as it is. A name the container has is refused.")

    @Option(name: .long, help: "The app container that gets the copy (made, private, if the remote has none).")
    var app: String

    @Option(name: .customLong("as"), help: "The copy's name in the container (default: the source's).")
    var name: String?

    @Option(name: .long, help: "The Folio mount whose remote holds the container (default: see `folio import --help`).")
    var mount: String?

    @Argument(help: "The document to copy.")
    var source: String

    func run() throws {
        let mountpoint = try MountChoice.mountpoint(given: mount)
        let absolute = RuntimePaths.canonical(source)
        let response = try ControlClient.send(
            ControlRequest(command: "import", path: absolute, app: app, target: name), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        print(response.message ?? "imported")
    }
}
