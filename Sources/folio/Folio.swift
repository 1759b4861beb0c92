import ArgumentParser

/// The `folio` command.
@main
struct Folio: ParsableCommand {
    /// Folio's version, as `folio --version` prints it (the one place it is written).
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "folio",
        abstract: "Folio: a document filesystem — containers, placeholders, coordinated commits, uploads.",
        version: version,
        subcommands: [
            MountCommand.self, UnmountCommand.self, StatusCommand.self, RetryCommand.self, PinCommand.self,
            UnpinCommand.self, EvictCommand.self, DownloadCommand.self, ThumbnailCommand.self, VersionsCommand.self,
            GrantCommand.self, RevokeCommand.self, GrantsCommand.self, BookmarkCommand.self, ResolveCommand.self,
            ContainersCommand.self, ImportCommand.self, ExportCommand.self, MoveCommand.self,
            RecentsCommand.self, TagCommand.self,
            DemoCommand.self, ReplayHelperCommand.self,
        ])
}
