import ArgumentParser
import FolioDaemon
import Foundation

/// `folio grant PATH --app ID [--as NAME]`: lets an app open a document in place.
struct GrantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Let an app open a document in place: an external reference in the app's container.",
        discussion: """
            The reference is the document itself (same inode, content, versions and attributes), not a copy: \
            edits through it change the original, and it follows the original through renames, moves and \
            atomic saves. Removing the reference (rm) leaves the document alone; deleting the document removes \
            its references. Only documents (files) can be granted.
            """)

    @Option(name: .long, help: "The app container that gets the reference (e.g. com.example.notes).")
    var app: String

    @Option(name: .customLong("as"), help: "The reference's name in the app's container (default: the document's).")
    var name: String?

    @Argument(help: "The document, a path inside a Folio mount.")
    var path: String

    func run() throws {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let response = try ControlClient.send(
            ControlRequest(command: "grant", path: relative, app: app, target: name), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        print(response.message ?? "granted")
    }
}
