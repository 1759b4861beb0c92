import Foundation
import Synchronization

/// Maps the thread id the kernel puts into a FUSE request to its process (thread-group) id.
public final class ProcessIdentity: Sendable {
    private let cache = Mutex<[Int32: Int32]>([:])

    /// Creates an empty cache.
    public init() {}

    /// The thread-group id of thread `tid`, read from `/proc/TID/status` and cached; `tid` itself when
    /// the thread is gone.
    public func processID(ofThread tid: Int32) -> Int32 {
        guard tid > 0 else { return 0 }
        if let known = cache.withLock({ $0[tid] }) { return known }
        var tgid = tid
        if let status = try? String(contentsOfFile: "/proc/\(tid)/status", encoding: .utf8) {
            for line in status.split(separator: "\n") where line.hasPrefix("Tgid:") {
                tgid = Int32(line.dropFirst(5).trimmingCharacters(in: .whitespaces)) ?? tid
                break
            }
        }
        cache.withLock { cache in
            if cache.count > 4096 { cache.removeAll() }
            cache[tid] = tgid
        }
        return tgid
    }

    /// The name of process `pid` as the kernel keeps it (`/proc/PID/comm`: the executable's name, cut to 15
    /// bytes); `nil` when the process is gone. Never cached: a process id is reused.
    public func name(ofProcess pid: Int32) -> String? {
        guard pid > 0, let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return nil }
        return comm.trimmingCharacters(in: .newlines)
    }

    /// Whether process `pid` is one of `names` (compared as the kernel cuts names, to 15 bytes).
    public func isProcess(_ pid: Int32, oneOf names: Set<String>) -> Bool {
        guard !names.isEmpty, let name = name(ofProcess: pid) else { return false }
        return names.contains { String(decoding: $0.utf8.prefix(15), as: UTF8.self) == name }
    }
}
