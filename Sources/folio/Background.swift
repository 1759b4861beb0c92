import FolioCore
import FolioDaemon
import Foundation
import SystemPackage

/// Starting the daemon in the background: `folio mount` re-runs itself with `--foreground` in a new session
/// (no `fork()` of a process that already has threads), logs to the state folder, and waits until the child
/// reports the mount up or failed.
enum Background {
    /// What the daemon's line on the ready pipe starts with when the mount failed; the reason follows.
    static let failurePrefix = "error: "

    /// Starts the daemon and returns once it reports the mount up. If it fails, a state folder this call created
    /// is removed again (one that existed stays).
    static func spawnAndWait(arguments: [String], stateDirectory: String) throws {
        let folder = try StateFolder.prepare(at: FilePath(stateDirectory))
        if let notice = folder.notice { FileHandle.standardError.write(Data("folio: \(notice)\n".utf8)) }
        do {
            try spawnAndWait(arguments: arguments, logPath: stateDirectory + "/folio.log", keepsLog: folder.existed)
        } catch {
            folder.discardIfCreated()
            throw error
        }
    }

    private static func spawnAndWait(arguments: [String], logPath: String, keepsLog: Bool) throws {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw CLIError("cannot create a pipe") }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        let childArguments = ["folio"] + arguments.dropLast() + ["--foreground", "--ready-fd", "3", arguments.last!]

        // Only the descriptors set up below reach the daemon: whatever else this process has open (a caller's
        // pipes, for one) must not stay open for the daemon's lifetime.
        markDescriptorsCloseOnExec()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(0x80))  // POSIX_SPAWN_SETSID

        var pid: pid_t = 0
        let cArguments = childArguments.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, cArguments, environ)
        close(pipeFDs[1])
        guard spawned == 0 else {
            close(pipeFDs[0])
            throw CLIError("cannot start the daemon: \(String(cString: strerror(spawned)))")
        }
        var data = [UInt8]()
        var byte: UInt8 = 0
        while read(pipeFDs[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") { data.append(byte) }
        close(pipeFDs[0])
        let message = String(decoding: data, as: UTF8.self)
        if message == "ready" { return }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        if message.hasPrefix(failurePrefix) {
            let reason = message.dropFirst(failurePrefix.count)
            throw CLIError("mount failed: \(reason)" + (keepsLog ? " (log: \(logPath))" : ""))
        }
        // No reason given (the daemon crashed): the log is all there is, and it goes with a state folder this
        // mount created.
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = log.split(separator: "\n").suffix(20).joined(separator: "\n")
        throw CLIError(
            "mount failed: the daemon exited without mounting"
                + (keepsLog ? " (log: \(logPath))" : tail.isEmpty ? "" : "; its log:\n" + tail))
    }

    private static func markDescriptorsCloseOnExec() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for entry in entries {
            guard let fd = Int32(entry), fd > 2 else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    static func signalReady(_ fd: Int32?, message: String) {
        guard let fd else { return }
        let line = message + "\n"
        _ = line.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }
}
