import ArgumentParser
import FolioCore
import FolioDaemon
import Foundation

/// `folio recents [--json] [--app ID]`: the documents used last.
struct RecentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recents",
        abstract: "List the documents opened or saved last (most recent first), as `.Recents/` shows them.",
        discussion: "Recents are kept by item id: a document renamed or moved stays in them. With --app, only "
            + "what that app may open (its container, and documents granted to it), by the names it sees them by.")

    @Flag(name: .long, help: "Print JSON: id, path (relative to the view's root), lastUsed.")
    var json = false

    @Option(name: .long, help: "Only the documents this app container may open.")
    var app: String?

    @Option(name: .long, help: "The Folio mount to ask (default: the one holding the current folder, or the only one).")
    var mount: String?

    func run() throws {
        let mountpoint = try MountChoice.mountpoint(given: mount)
        let response = try ControlClient.send(ControlRequest(command: "recents", app: app), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        let recents = response.recents ?? []
        if json {
            struct Entry: Encodable {
                var id: String
                var path: String
                var lastUsed: String
            }
            let entries = recents.map { Entry(id: $0.id, path: $0.path, lastUsed: Self.iso8601($0.lastUsed)) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(entries), as: UTF8.self))
            return
        }
        // Paths of the mount's own view are absolute; another app's view is not mounted here: `ID:path`.
        let ownView = app == nil || response.view == NamespaceView.app(ContainerID(app ?? "")).description
        for recent in recents {
            let shown = ownView ? mountpoint + "/" + recent.path : "\(app ?? ""):\(recent.path)"
            print("\(Self.iso8601(recent.lastUsed))\t\(shown)")
        }
    }

    private static func iso8601(_ time: Timestamp) -> String {
        let date = Date(timeIntervalSince1970: Double(time.seconds) + Double(time.nanoseconds) / 1e9)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
