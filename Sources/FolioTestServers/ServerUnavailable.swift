/// A test server this machine cannot run: a program it needs is not installed, or it needs root. Test targets
/// turn it into a skipped test (`XCTSkip`); this library does not import XCTest.
public struct ServerUnavailable: Error, CustomStringConvertible {
    /// What is missing, and what installs it.
    public let reason: String

    /// The server cannot run, for `reason`.
    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
