import ArgumentParser
import FolioDaemon
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
        let home = RuntimePaths.home
        let remote = self.remote ?? home + "/.local/share/folio/demo-remote"
        let mountpoint = RuntimePaths.canonical(self.mountpoint ?? home + "/Folio")
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        if let running = ControlClient.runningMount(at: mountpoint) {
            guard running.remote == RuntimePaths.canonical(remote) else {
                throw CLIError("\(mountpoint) is already a Folio mount of \(running.remote ?? "another remote")")
            }
            print("The demo is already mounted at \(mountpoint).")
        } else {
            print("Preparing the sample remote in \(remote) …")
            try DemoRemote.create(at: FilePath(remote))
            let mount = try MountCommand.parse([
                "--remote", remote, "--simulate-latency-ms", "50", "--simulate-bandwidth", "\(20 << 20)", mountpoint,
            ])
            try mount.validate()
            try mount.run()
        }
        let folio = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "folio"
        let m = mountpoint
        print("""

        Try (the provider simulates 50 ms latency and 20 MiB/s, so downloads take visible time):
          ls -la \(m) \(m)/Notes            # Drive documents + the public Notes container; nothing downloaded
          getfattr -d \(m)/Media/field-recording.raw     # user.folio.state="placeholder"
          cat \(m)/Notes/Welcome.md                      # materializes on open
          cat \(m)/Media/field-recording.raw > /dev/null &
          watch -n 0.2 getfattr -n user.folio.progress \(m)/Media/field-recording.raw
          echo hello > \(m)/hello.txt && \(folio) status \(m)/hello.txt
          \(folio) status \(m)
          \(folio) pin \(m)/Pictures && ls \(m)/.Recents              # keep a folder downloaded; recent documents
          mkdir -p \(m)-secret && \(folio) mount --app com.example.secret --of \(m) \(m)-secret   # a private app view
          \(folio) containers \(m)                      # the containers; `folio import|export|move` between them
          t=$(\(folio) bookmark \(m)/Notes/Welcome.md); mv \(m)/Notes/Welcome.md \(m)/Notes/Hi.md; \(folio) resolve "$t"
          \(folio) tag add \(m)/Notes/Hi.md work && ls \(m)/.Tags/work   # tags travel with the document
          \(folio) unmount \(m)
        The remote is \(remote): uploads land there, one folder per container (the mount's own documents in
        com.folio.drive/; the private com.example.secret container is not in this view).
        """)
    }
}
