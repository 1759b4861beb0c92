/// What one run of a sequence found wrong: the step, the check, and what the last steps did.
struct ReferenceFailure: Error, CustomStringConvertible {
    /// The step that failed (the sequence's length: the final settle).
    var step: Int
    /// The check that failed, to tell failures apart while shrinking.
    var kind: String
    /// What was expected and found.
    var message: String
    /// The steps that ran, as they resolved (paths, contents).
    var log: [String]

    var description: String { "step \(step): \(kind): \(message)" }
}
