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
}
