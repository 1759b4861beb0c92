/// How long the uploader waits before trying again after failures (DESIGN.md §2 "Upload"): ``minimum`` after
/// the first, doubling with every further failure up to ``maximum`` (so a failure that lasts, offline or out of
/// space, is retried forever at most that far apart), never zero; nothing again once the queue is empty or the
/// user asks for a retry. A value type that does no I/O.
public struct UploadBackoff: Equatable, Sendable {
    /// The wait after the first failure.
    public let minimum: Duration
    /// The longest wait.
    public let maximum: Duration
    /// The wait the last failure asked for (zero: no failure since the last reset).
    public private(set) var current: Duration = .zero

    /// The shortest wait ever returned: never a busy loop, even with no minimum.
    public static let floor: Duration = .milliseconds(1)

    /// A backoff from `minimum` to `maximum`.
    public init(minimum: Duration, maximum: Duration) {
        self.minimum = minimum
        self.maximum = maximum
    }

    /// Records a failure; returns how long to wait before the next try.
    public mutating func failed() -> Duration {
        current = min(current == .zero ? minimum : current * 2, maximum)
        return max(current, Self.floor)
    }

    /// Starts over (the queue is empty, or the user asked for a retry).
    public mutating func reset() {
        current = .zero
    }
}
