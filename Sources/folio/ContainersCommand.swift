import ArgumentParser
import FolioDaemon
import Foundation

/// `folio containers [PATH] [--json]`: the remote's containers.
struct ContainersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "containers",
        abstract: "List the remote's containers: id, display name, public or private, items, size, size here.",
        discussion: """
            Items and sizes count what this machine knows: folders are listed when first looked at, so a \
            container with folders not listed yet counts less than the remote holds (the last column says how \
            many; `folio download PATH` lists and fetches a folder whole). `folio mount --app ID` makes a \
            container the remote does not have yet.
            """)

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    @Argument(help: "A Folio mount, or a path inside one (default: the current folder).")
    var path: String = "."

    func run() throws {
        guard let (mountpoint, _) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let response = try ControlClient.send(ControlRequest(command: "containers"), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        let containers = response.containers ?? []
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(containers), as: UTF8.self))
            return
        }
        print(["ID", "NAME", "VISIBILITY", "ITEMS", "SIZE", "HERE", "NOT LISTED"].joined(separator: "\t"))
        for container in containers {
            print([
                container.id, container.displayName, container.isPublic ? "public" : "private", "\(container.items)",
                "\(container.size)", "\(container.localSize)", "\(container.foldersNotListed)",
            ].joined(separator: "\t"))
        }
    }
}
