/// A provider did not behave as the ``ProviderConformance`` suite requires.
public struct ConformanceFailure: Error, CustomStringConvertible, Sendable {
    /// The check that failed (or "runAll" for a summary of several failures).
    public var check: String
    /// What was expected and what happened.
    public var message: String

    /// A failure of `check`.
    public init(check: String, message: String) {
        self.check = check
        self.message = message
    }

    /// The check and the message, for test reports.
    public var description: String { "provider conformance check \(check) failed: \(message)" }
}
