import Foundation
import Synchronization

/// Runs a program to its end: started with `posix_spawn` (standard input, output and error on `/dev/null`, no
/// other descriptor inherited, default signal mask), waited for on a thread of its own, killed at a deadline.
///
/// Not Foundation's `Process`: on Linux it learns of a child's end when a socket that only the child should hold
/// is closed, and a long-lived child started at the same moment (the daemon's replay helper) can inherit that
/// socket too. The first child then ends unnoticed: a zombie, never reaped, its `terminationHandler` never
/// called, and the describer waiting on that thumbnailer waited for good (`ThumbnailerTests`).
enum ChildProcess {
    /// Whether the child has ended (set before it is reaped, so a kill never reaches a reused process id).
    private final class Ending: Sendable {
        let ended = Mutex(false)
    }

    /// Runs `arguments` (the first is the program's absolute path); returns its exit status, or `nil` if it
    /// could not start, was killed at `deadline`, or ended by a signal.
    static func run(_ arguments: [String], deadline: Duration) async -> Int32? {
        guard let pid = spawn(arguments) else { return nil }
        let ending = Ending()
        let killer = Task {
            guard (try? await Task.sleep(for: deadline)) != nil else { return }
            ending.ended.withLock { ended in
                if !ended { kill(pid, SIGKILL) }
            }
        }
        defer { killer.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int32?, Never>) in
            Thread.detachNewThread {
                // The end, without reaping: until the child is reaped its id cannot be reused, so the killer,
                // which checks `ended` under the same lock, can only ever kill this child.
                var information = siginfo_t()
                while waitid(P_PID, id_t(pid), &information, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
                ending.ended.withLock { $0 = true }
                var status: Int32 = 0
                var reaped: pid_t
                repeat { reaped = waitpid(pid, &status, 0) } while reaped < 0 && errno == EINTR
                let exited = reaped == pid && status & 0x7f == 0
                continuation.resume(returning: exited ? (status >> 8) & 0xff : nil)
            }
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module does not declare
    /// it): the child keeps no descriptor above 2, whether or not it was opened close-on-exec.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let library = dlopen(nil, RTLD_NOW),
            let symbol = dlsym(library, "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Starts `arguments`; its process id, or `nil` if it could not be started.
    private static func spawn(_ arguments: [String]) -> pid_t? {
        guard let program = arguments.first else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        _ = addCloseFrom?(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, program, &actions, &attributes, cArguments, environ) == 0 else { return nil }
        return pid
    }
}
