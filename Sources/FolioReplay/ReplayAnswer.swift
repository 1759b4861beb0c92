import SystemPackage

/// What the replay helper answered for one operation.
enum ReplayAnswer: Equatable, Sendable {
    /// The system call succeeded (its events fired).
    case done
    /// It failed with this error.
    case failed(Errno)
    /// No answer came (the helper is gone, slow, or the mount is ending).
    case none

    /// The answer a helper's line holds: `0`, or an errno number.
    init(line: String) {
        switch Int32(line) {
        case 0?: self = .done
        case let code?: self = .failed(Errno(rawValue: code))
        case nil: self = .failed(.ioError)
        }
    }

    /// The line a helper writes for the outcome of an operation (`nil`: it succeeded).
    static func line(for error: Errno?) -> String {
        "\(error?.rawValue ?? 0)\n"
    }

    /// Whether the kernel had the name cached again (looked up by another process since it was dropped): a create
    /// then fails with `EEXIST`, a remove or move with `ENOENT`, firing nothing.
    var raced: Bool {
        self == .failed(.fileExists) || self == .failed(.noSuchFileOrDirectory)
    }
}
