import ArgumentParser
import FolioDaemon
import Foundation

/// `folio resolve TOKEN [--json] [--mount PATH]`: the current path of a bookmarked item.
struct ResolveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Print the current path of a bookmarked item (a token from `folio bookmark`).",
        discussion: """
            Asks the mount given by --mount, else the one holding the current folder, else every Folio mount of \
            this machine, and prints the path through the first that resolves it. A document replaced by a save \
            that made a new item at its place resolves as stale: the path is the new document's, and a fresh \
            token is given to keep (on stderr, or in the JSON). A deleted document is an error.
            """)

    @Flag(name: .long, help: "Print JSON: path, relativePath, stale, bookmark (the token to keep), id.")
    var json = false

    @Option(name: .long, help: "A Folio mount (or a path inside one) to resolve through.")
    var mount: String?

    @Argument(help: "The bookmark token.")
    var token: String

    func run() throws {
        var mountpoints: [String] = []
        if let mount {
            guard let (mountpoint, _) = ControlClient.mountpoint(containing: mount) else {
                throw CLIError(ControlClient.notControllableMessage(for: mount))
            }
            mountpoints = [mountpoint]
        } else {
            if let (here, _) = ControlClient.mountpoint(containing: FileManager.default.currentDirectoryPath) {
                mountpoints.append(here)
            }
            mountpoints += ControlClient.folioMountpoints().filter { !mountpoints.contains($0) }
        }
        guard !mountpoints.isEmpty else { throw CLIError("no Folio mount is running to resolve the bookmark") }
        var refusals: [String] = []
        for mountpoint in mountpoints {
            let request = ControlRequest(command: "resolve-bookmark", target: token)
            guard let response = try? ControlClient.send(request, mountpoint: mountpoint) else { continue }
            guard response.ok, let resolution = response.bookmark else {
                refusals.append(response.error ?? "refused")
                continue
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(resolution), as: UTF8.self))
            } else {
                print(resolution.path)
                if resolution.stale {
                    let note = "stale: the bookmarked document was replaced by the one at this path; keep this "
                        + "bookmark instead:\n\(resolution.bookmark)\n"
                    FileHandle.standardError.write(Data(note.utf8))
                }
            }
            return
        }
        // The most telling refusal: one from the installation that made the token, when there is one.
        let mine = refusals.first { !$0.contains("another Folio installation") && !$0.contains("not available") }
        throw CLIError(mine ?? refusals.first ?? "no Folio daemon answered")
    }
}
