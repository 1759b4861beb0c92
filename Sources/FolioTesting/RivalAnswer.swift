import FolioCore

/// What a rival's operation gave.
public struct RivalAnswer: Codable, Sendable, Equatable {
    /// How an operation ended.
    public enum Outcome: String, Codable, Sendable {
        /// It succeeded.
        case done
        /// `.conflict`.
        case conflict
        /// `.exists`.
        case exists
        /// `.notFound`.
        case notFound
        /// Any other error.
        case failed
    }

    /// How it ended.
    public var outcome: Outcome
    /// The item's version after a successful modify or create.
    public var version: String?
    /// The error's description, or what was done.
    public var message: String?
    /// When the operation started and ended, in `CLOCK_MONOTONIC` nanoseconds (to see that two rivals overlapped).
    public var startedAt: UInt64 = 0
    /// See ``startedAt``.
    public var endedAt: UInt64 = 0

    /// Whether this operation and `other` ran at the same time, at least in part.
    public func overlaps(_ other: RivalAnswer) -> Bool {
        max(startedAt, other.startedAt) < min(endedAt, other.endedAt)
    }

    /// An answer.
    public init(outcome: Outcome, version: String?, message: String?) {
        self.outcome = outcome
        self.version = version
        self.message = message
    }

    /// The answer for an operation that gave `item`.
    init(item: RemoteItem) {
        self.init(outcome: .done, version: item.version, message: item.name)
    }

    /// The answer for an operation that failed with `error`.
    init(error: FolioError) {
        let outcome: Outcome
        switch error {
        case .conflict: outcome = .conflict
        case .exists: outcome = .exists
        case .notFound: outcome = .notFound
        default: outcome = .failed
        }
        self.init(outcome: outcome, version: nil, message: error.description)
    }
}
