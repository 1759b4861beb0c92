import ArgumentParser

/// The `folio` command.
@main
struct Folio: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio",
        abstract: "Folio: a document filesystem — containers, placeholders, coordinated commits, uploads.",
        subcommands: [
            MountCommand.self, UnmountCommand.self, StatusCommand.self, RetryCommand.self, PinCommand.self,
            UnpinCommand.self, EvictCommand.self, DownloadCommand.self, VersionsCommand.self, GrantCommand.self,
            DemoCommand.self, ReplayHelperCommand.self,
        ])
}
