import ArgumentParser
import FolioDaemon
import Foundation

/// `folio bookmark PATH`: a token that finds the document again after renames and moves.
struct BookmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookmark",
        abstract: "Print a bookmark of an item: an opaque token that `folio resolve` turns into its current path.",
        discussion: """
            The token names the item, not its path: it resolves after renames and moves, after the daemon \
            restarted and after the item was evicted. It is signed with this installation's key (the state \
            folder's bookmark.key) and the view it was made in: another installation, a changed byte, or another \
            app's view without a grant of the item is refused.
            """)

    @Argument(help: "A path inside a Folio mount (the full view or an app view).")
    var path: String

    func run() throws {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let response = try ControlClient.send(ControlRequest(command: "bookmark", path: relative), mountpoint: mountpoint)
        guard response.ok, let token = response.message else {
            throw CLIError(response.error ?? "the daemon refused the request")
        }
        print(token)
    }
}
