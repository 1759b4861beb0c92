import ArgumentParser
import FolioDaemon
import Foundation

/// `folio revoke PATH --app ID`: takes back a grant.
struct RevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Take back what `folio grant` gave: remove the app's references to a document.",
        discussion: "The document stays where it is; the app's container no longer shows it (a file the app has "
            + "open stays open until it closes it). Bookmarks the app made of it no longer resolve in its view.")

    @Option(name: .long, help: "The app container whose references are removed.")
    var app: String

    @Argument(help: "The document, a path inside a Folio mount.")
    var path: String

    func run() throws {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let response = try ControlClient.send(
            ControlRequest(command: "revoke", path: relative, app: app), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        print(response.message ?? "revoked")
    }
}
