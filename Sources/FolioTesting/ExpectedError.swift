import FolioCore

/// The kinds of ``FolioError`` a conformance check expects, matched by case (messages are free).
enum ExpectedError: String, Sendable {
    case notFound, exists, notDirectory, isDirectory, notEmpty, nameTooLong, invalidArgument, conflict
    case interrupted, offline, providerFailure, anchorExpired

    /// Whether `error` is of this kind.
    func matches(_ error: FolioError) -> Bool {
        switch (self, error) {
        case (.notFound, .notFound), (.exists, .exists), (.notDirectory, .notDirectory),
            (.isDirectory, .isDirectory), (.notEmpty, .notEmpty), (.nameTooLong, .nameTooLong),
            (.invalidArgument, .invalidArgument), (.conflict, .conflict), (.interrupted, .interrupted),
            (.offline, .offline), (.providerFailure, .providerFailure), (.anchorExpired, .anchorExpired):
            return true
        default:
            return false
        }
    }
}
