import ArgumentParser
import FolioDaemon
import FolioProviderLocal
import Foundation
import SystemPackage

/// `folio demo [MOUNTPOINT]`: the embedded default — a sample remote with three containers, mounted.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Create a sample remote (once) and mount it with a simulated network.")

    @Option(name: .long, help: "Where the sample remote lives.")
    var remote: String?

    @Argument(help: "Where to mount (default ~/Folio).")
    var mountpoint: String?

    func run() throws {
        let home = NSHomeDirectory()
        let remote = self.remote ?? home + "/.local/share/folio/demo-remote"
        let mountpoint = RuntimePaths.canonical(self.mountpoint ?? home + "/Folio")
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        if (try? ControlClient.send(.init(command: "status"), mountpoint: mountpoint))?.ok == true {
            print("The demo is already mounted at \(mountpoint).")
        } else {
            print("Preparing the sample remote in \(remote) …")
            try SampleRemote.create(at: FilePath(remote))
            let mount = try MountCommand.parse([
                "--remote", remote, "--simulate-latency-ms", "50", "--simulate-bandwidth", "\(20 << 20)", mountpoint,
            ])
            try mount.validate()
            try mount.run()
        }
        print("""

        Try:
          ls -la \(mountpoint)                      # Drive documents + the Notes container, no download yet
          getfattr -d \(mountpoint)/Large/*         # user.folio.state = placeholder
          cat \(mountpoint)/Notes/*.md              # materializes on open
          cp \(mountpoint)/Large/* /tmp/ & watch -n0.2 getfattr -n user.folio.progress \(mountpoint)/Large/*
          echo hello > \(mountpoint)/hello.txt; folio status \(mountpoint)/hello.txt
          folio status \(mountpoint)
          folio unmount \(mountpoint)
        The remote itself is \(remote): its files change as uploads land.
        """)
    }
}
