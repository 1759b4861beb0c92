import ArgumentParser
import FolioDaemon
import Foundation

/// Sends a command about one path inside a mount and prints the daemon's answer.
private func sendPathCommand(_ command: String, path: String) throws {
    guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
        throw CLIError(ControlClient.notControllableMessage(for: path))
    }
    let response = try ControlClient.send(ControlRequest(command: command, path: relative), mountpoint: mountpoint)
    guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
    print(response.message ?? "done")
}

/// `folio pin PATH`.
struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Keep an item downloaded (a folder: everything in it, also what is added later).",
        discussion: "The same as `setfattr -n user.folio.pinned -v 1 PATH`. Placeholders are downloaded in the "
            + "background; `folio status PATH` shows the progress.")

    @Argument(help: "A file or folder inside a Folio mount.")
    var path: String

    func run() throws { try sendPathCommand("pin", path: path) }
}

/// `folio unpin PATH`.
struct UnpinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin", abstract: "Let an item be evicted again (a folder: everything in it).")

    @Argument(help: "A file or folder inside a Folio mount.")
    var path: String

    func run() throws { try sendPathCommand("unpin", path: path) }
}

/// `folio evict PATH`.
struct EvictCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evict",
        abstract: "Turn downloaded files back into placeholders, freeing their local content.",
        discussion: "Only clean files are evicted: a file with changes not uploaded yet, a pinned, open or "
            + "conflicted file is refused (in a folder: kept, and listed).")

    @Argument(help: "A file or folder inside a Folio mount.")
    var path: String

    func run() throws { try sendPathCommand("evict", path: path) }
}

/// `folio download PATH`.
struct DownloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download", abstract: "Download placeholders without opening them (a folder: everything in it).")

    @Argument(help: "A file or folder inside a Folio mount.")
    var path: String

    func run() throws { try sendPathCommand("download", path: path) }
}

/// `folio thumbnail PATH [--size normal|large]`.
struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Write a document's thumbnail (PNG) to standard output, also for a placeholder.",
        discussion: "Folio makes thumbnails with the machine's thumbnailers while a document's content is here, "
            + "and keeps them at the remote, so every device has them without the content. Example: "
            + "folio thumbnail ~/Folio/Pictures/cat.jpg --size large > cat.png")

    @Argument(help: "A file inside a Folio mount.")
    var path: String

    @Option(help: "normal (128 pixels) or large (256 pixels).")
    var size: String = "normal"

    func run() throws {
        guard let (mountpoint, relative) = ControlClient.mountpoint(containing: path) else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        guard isatty(STDOUT_FILENO) == 0 else {
            throw CLIError("a thumbnail is a PNG image: send it to a file (folio thumbnail PATH > thumbnail.png)")
        }
        let response = try ControlClient.send(
            ControlRequest(command: "thumbnail", path: relative, target: size), mountpoint: mountpoint)
        guard response.ok else { throw CLIError(response.error ?? "the daemon refused the request") }
        guard let encoded = response.data, let png = Data(base64Encoded: encoded) else {
            throw CLIError("the daemon sent no image")
        }
        FileHandle.standardOutput.write(png)
    }
}
