import ArgumentParser
import FolioDaemon
import Foundation

/// `folio move PATH DEST-FOLDER`: the document picker's move mode.
struct MoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move a document to another container's folder, leaving a reference where it was.",
        discussion: """
            The document (same item, versions, tags and bookmarks) moves to DEST-FOLDER, on the remote too; an \
            external reference at its old place keeps opening it in place for the app it came from. Both paths \
            must be in one Folio mount. References are local to this machine: another device sees the document \
            in its new container, and nothing at its old place.
            """)

    @Argument(help: "The document, a path inside a Folio mount.")
    var path: String

    @Argument(help: "A folder of another container in the same mount.")
    var destination: String

    func run() throws {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        guard let (destinationMount, destinationRelative) = ControlClient.mountpoint(containing: destination),
              destinationMount == mountpoint else {
            throw CLIError("\(destination) is not in the Folio mount at \(mountpoint): use folio export to copy out")
        }
        let response = try ControlClient.send(
            ControlRequest(command: "move", path: relative, target: destinationRelative), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        print(response.message ?? "moved")
    }
}
