import ArgumentParser
import FolioDaemon
import Foundation

/// `folio grants [PATH] [--json]`: the external references of a mount.
struct GrantsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grants",
        abstract: "List the grants (external references): which app opens which document, and under which name.")

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Argument(help: "A document (only its grants), or a mount (all of them; default: the current folder).")
    var path: String = "."

    func run() throws {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let request = ControlRequest(command: "grants", path: relative.isEmpty ? nil : relative)
        let response = try ControlClient.send(request, mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        let grants = response.grants ?? []
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(grants), as: UTF8.self))
            return
        }
        for grant in grants {
            let document = grant.documentPath.map { mountpoint + "/" + $0 } ?? "item \(grant.document.rawValue)"
            print("\(grant.app.rawValue)\t\(grant.path)\t\(document)")
        }
    }
}
