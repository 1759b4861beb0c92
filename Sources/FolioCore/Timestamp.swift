import Foundation

/// A point in time with nanosecond precision, as filesystems store it.
public struct Timestamp: Hashable, Sendable, Codable, Comparable {
    /// Whole seconds since the epoch.
    public var seconds: Int64
    /// Nanoseconds within the second.
    public var nanoseconds: Int64

    /// Creates a timestamp.
    public init(seconds: Int64, nanoseconds: Int64) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The current wall-clock time.
    public static func now() -> Timestamp {
        var ts = Glibc.timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int64(ts.tv_nsec))
    }

    /// The time as a `timespec`.
    public var timespecValue: Glibc.timespec { Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds)) }

    /// Total nanoseconds since the epoch.
    public var totalNanoseconds: Int64 { seconds &* 1_000_000_000 &+ nanoseconds }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }
}
