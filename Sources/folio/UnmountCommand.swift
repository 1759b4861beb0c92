import ArgumentParser
import FolioDaemon
import Foundation

/// `folio unmount [--wait] MOUNTPOINT`.
struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount", abstract: "Unmount a Folio mount.",
        discussion: """
            Uploads still queued stay in the state folder and resume at the next mount of the same remote; \
            unmount says how many there are. With --wait it first waits until the queue is empty.
            """)

    @Flag(name: .long, help: "Wait until every queued upload reached the remote (with a progress line), then unmount.")
    var wait = false

    @Argument(help: "The mountpoint.")
    var mountpoint: String

    func run() throws {
        let mountpoint = RuntimePaths.canonical(self.mountpoint)
        var daemon = ControlClient.runningMount(at: mountpoint)
        if wait, daemon?.isAttachedView != true, let answer = daemon {
            daemon = try Self.waitForUploads(mountpoint: mountpoint, answer: answer)
        }
        let tool = FileManager.default.isExecutableFile(atPath: "/usr/bin/fusermount3")
            ? "/usr/bin/fusermount3" : "/bin/fusermount3"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-u", mountpoint]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIError("cannot unmount \(mountpoint) (is it busy? fusermount3 exited \(process.terminationStatus))")
        }
        if daemon?.isAttachedView == true {
            // The daemon serves another mount and stays: wait for this view's control socket to go.
            let socket = RuntimePaths.controlSocket(forMountpoint: mountpoint).string
            for _ in 0..<200 where FileManager.default.fileExists(atPath: socket) { usleep(50_000) }
            print("unmounted \(mountpoint)")
            return
        }
        if let pid = daemon?.pid {
            for _ in 0..<200 where kill(pid, 0) == 0 { usleep(50_000) }
        }
        print("unmounted \(mountpoint)")
        if let queued = daemon?.summary?.pendingUploads, queued > 0 {
            let remote = daemon?.remote ?? "the remote"
            print(queued == 1
                ? "1 upload is still queued; it resumes at the next mount of \(remote)"
                : "\(queued) uploads are still queued; they resume at the next mount of \(remote)")
        }
    }

    /// Waits until the daemon of `mountpoint` has no upload left to make, showing how many are left, and
    /// returns its last answer. Uploads that wait for the user (failed, or refused until the user acts) are not
    /// waited for.
    private static func waitForUploads(mountpoint: String, answer: ControlResponse) throws -> ControlResponse {
        var answer = answer
        var progress = ProgressLine()
        defer { progress.finish() }
        while let summary = answer.summary, summary.pendingUploads > 0 {
            let stuck = summary.waitingForUser
            if summary.uploadsInFlight == 0, stuck > 0, summary.pendingUploads <= stuck {
                progress.show(
                    "not waiting for what needs you (\(Wording.count(stuck, "upload"))): folio status says why")
                break
            }
            var line = "waiting for \(Wording.count(summary.pendingUploads, "upload")) to reach the remote "
                + "(\(summary.uploadsInFlight) in flight)"
            if !summary.providerOnline {
                line += "; the remote is offline"
                    + (summary.lastProviderError.map { " (\($0))" } ?? "")
                    + ": waiting until it is back (Ctrl-C stops waiting and leaves the mount up)"
            }
            progress.show(line)
            usleep(200_000)
            guard let next = ControlClient.runningMount(at: mountpoint) else {
                throw CLIError("the daemon of \(mountpoint) stopped answering while waiting for uploads")
            }
            answer = next
        }
        return answer
    }
}

/// A line that shows progress: rewritten in place on a terminal, printed once per change otherwise.
private struct ProgressLine {
    private let terminal = isatty(1) == 1
    private var last: String?

    /// Shows `line` unless it is the one shown last.
    mutating func show(_ line: String) {
        guard line != last else { return }
        last = line
        // Written at once (not through print's buffer), so a reader of a pipe sees it while the wait lasts.
        FileHandle.standardOutput.write(Data((terminal ? "\r\u{1B}[K" + line : line + "\n").utf8))
    }

    /// Ends the line on a terminal.
    func finish() {
        if terminal, last != nil { FileHandle.standardOutput.write(Data("\n".utf8)) }
    }
}
