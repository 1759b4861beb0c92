import Glibc
import SystemPackage

/// Runs code with this process out of file descriptors.
enum DescriptorLimit {
    /// Runs `body` with the descriptor limit lowered to the lowest free descriptor, so that every `open` fails
    /// with `EMFILE`; the limit is restored afterwards, also when `body` throws.
    static func reached<Value>(_ body: () throws -> Value) throws -> Value {
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        var original = rlimit()
        guard getrlimit(resource, &original) == 0 else { throw Errno(rawValue: errno) }
        var lowestFree: Int32 = 0
        while fcntl(lowestFree, F_GETFD) != -1 { lowestFree += 1 }
        var lowered = original
        lowered.rlim_cur = rlim_t(lowestFree)
        guard setrlimit(resource, &lowered) == 0 else { throw Errno(rawValue: errno) }
        defer { _ = setrlimit(resource, &original) }
        return try body()
    }
}
