import ArgumentParser
import FolioDaemon
import Foundation

/// `folio tag add|remove|list PATH [TAG...]`: an item's tags (`user.xdg.tags`), kept with the item at the
/// provider so they travel to other devices.
struct TagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag",
        abstract: "List, add or remove the tags of a file or folder (user.xdg.tags).",
        discussion: """
            Tags are kept with the item at the remote: they survive eviction, show on placeholders (getfattr -n \
            user.xdg.tags) and in .Tags/<tag>/, and appear on other devices. Two devices that tag an item at the \
            same time both end with both changes. The same as setfattr -n user.xdg.tags on the mount. A tag \
            cannot contain ',' or '/', nor be empty.
            """,
        subcommands: [List.self, Add.self, Remove.self])

    /// `folio tag list PATH`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print an item's tags, one per line.")

        @Flag(name: .long, help: "Print a JSON array.")
        var json = false

        @Argument(help: "A file or folder inside a Folio mount.")
        var path: String

        func run() throws {
            let response = try TagCommand.send("tag-list", path: path, tags: nil)
            if json {
                print(response.data ?? "[]")
            } else if let message = response.message, !message.isEmpty {
                print(message)
            }
        }
    }

    /// `folio tag add PATH TAG...`.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add tags to an item.")

        @Argument(help: "A file or folder inside a Folio mount.")
        var path: String

        @Argument(help: "The tags to add.")
        var tags: [String]

        func run() throws {
            print(try TagCommand.send("tag-add", path: path, tags: tags).message ?? "tagged")
        }
    }

    /// `folio tag remove PATH TAG...`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove tags from an item.")

        @Argument(help: "A file or folder inside a Folio mount.")
        var path: String

        @Argument(help: "The tags to remove.")
        var tags: [String]

        func run() throws {
            print(try TagCommand.send("tag-remove", path: path, tags: tags).message ?? "untagged")
        }
    }

    /// Sends one tag command to the daemon of the mount holding `path`; a refusal is a clear error.
    static func send(_ command: String, path: String, tags: [String]?) throws -> ControlResponse {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError("no such file or folder: \(path)")
        }
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let target = tags.map { String(decoding: (try? JSONEncoder().encode($0)) ?? Data("[]".utf8), as: UTF8.self) }
        let response = try ControlClient.send(
            ControlRequest(command: command, path: relative, target: target), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        return response
    }
}
