import Foundation

extension ProcessIdentity {
    /// The kernel's `PF_SIGNALED` task flag: the task is ending because of a signal.
    private static let killedBySignal: UInt = 0x400

    /// Whether process `pid` is ending because a signal killed it (Ctrl-C, `kill`): read from the flags in
    /// `/proc/PID/stat` while it closes its files (a `close()` at its exit is made by the dying task itself).
    /// `false` when it cannot be told.
    public static func isBeingKilledBySignal(_ pid: Int32) -> Bool {
        guard pid > 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")")
        else { return false }
        // After the command name: state, ppid, pgrp, session, tty_nr, tpgid, flags, ...
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 6, let flags = UInt(fields[6]) else { return false }
        return flags & killedBySignal != 0
    }
}
