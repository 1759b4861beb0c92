import ArgumentParser
import FolioCore
import FolioDaemon
import Foundation

/// `folio versions PATH`, `folio versions resolve PATH --keep …`, `folio versions show PATH VERSION`.
struct VersionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions",
        abstract: "List, show and resolve the versions of a document that changed here and on the remote.",
        discussion: """
            When a document changes on the remote while this machine has a change not uploaded yet, both are \
            kept: the local version stays current, the remote one is a conflict version (user.folio.state says \
            conflicted). Conflict versions are read-only files in the state folder's content cache; `folio \
            versions PATH --json` gives their paths.
            """,
        subcommands: [List.self, Resolve.self, Show.self], defaultSubcommand: List.self)

    /// Sends a request about `path` and returns the answer.
    static func request(_ command: String, path: String, target: String? = nil) throws -> ControlResponse {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        let response = try ControlClient.send(
            ControlRequest(command: command, path: relative, target: target), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        return response
    }

    /// `folio versions [list] PATH [--json]`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the current and the conflict versions (origin, time, size).")

        @Flag(name: .long, help: "Print JSON (with the path of each version's content).")
        var json = false

        @Argument(help: "A document inside a Folio mount.")
        var path: String

        func run() throws {
            let versions = try VersionsCommand.request("versions", path: path).versions ?? []
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(versions), as: UTF8.self))
                return
            }
            let formatter = ISO8601DateFormatter()
            for version in versions {
                let seconds = TimeInterval(version.modificationTime.seconds)
                let time = formatter.string(from: Date(timeIntervalSince1970: seconds))
                let id = version.isCurrent ? "current" : version.id
                print("\(id)\t\(version.origin)\t\(time)\t\(version.size) bytes")
            }
        }
    }

    /// `folio versions resolve PATH --keep local|remote|both`.
    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "Resolve a conflict: keep the local version, the remote one, or both (the other as a sibling).")

        @Option(name: .long, help: "local, remote or both.")
        var keep: String

        @Argument(help: "A conflicted document inside a Folio mount.")
        var path: String

        func validate() throws {
            guard ConflictResolution(rawValue: keep) != nil else {
                throw ValidationError("--keep takes local, remote or both, not '\(keep)'")
            }
        }

        func run() throws {
            print(try VersionsCommand.request("resolve", path: path, target: keep).message ?? "resolved")
        }
    }

    /// `folio versions show PATH VERSION`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Write a version's content to standard output.")

        @Argument(help: "A document inside a Folio mount.")
        var path: String

        @Argument(help: "`current` or a version id from `folio versions PATH`.")
        var version: String

        func run() throws {
            let versions = try VersionsCommand.request("versions", path: path).versions ?? []
            guard let chosen = versions.first(where: { $0.id == version || ($0.isCurrent && version == "current") })
            else {
                throw CLIError("\(path) has no version \(version) (see folio versions \(path))")
            }
            guard let file = chosen.path, let data = FileManager.default.contents(atPath: file) else {
                throw CLIError("version \(version) of \(path) is not on this machine")
            }
            FileHandle.standardOutput.write(data)
        }
    }
}
