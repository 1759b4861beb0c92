import SystemPackage

/// The one error type of Folio. Each case maps to exactly one errno (see ``errno``) and carries what a log
/// line needs to explain it.
public enum FolioError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No item by that name or id.
    case notFound(String)
    /// The name is taken.
    case exists(String)
    /// A folder was expected.
    case notDirectory(String)
    /// A file was expected.
    case isDirectory(String)
    /// `rmdir` of a folder with children.
    case notEmpty(String)
    /// The operation is refused for this kind of item (hard links, device nodes, container folders).
    case notPermitted(String)
    /// Mode bits forbid it.
    case accessDenied(String)
    /// A name longer than the provider stores.
    case nameTooLong(String)
    /// A name or argument the provider or POSIX cannot accept.
    case invalidArgument(String)
    /// A size past the largest file the content cache can hold.
    case fileTooLarge(String)
    /// Another process holds the item's write session and did not release it in time.
    case busy(String)
    /// The provider cannot be reached.
    case offline(String)
    /// The remote item changed since the version this change was based on.
    case conflict(String)
    /// The provider failed; `retryable` says whether trying again may help.
    case providerFailure(String, retryable: Bool)
    /// No space left for the content cache.
    case noSpace(String)
    /// An extended attribute is absent.
    case noAttribute(String)
    /// The caller's buffer is too small (xattr sizes).
    case range(String)
    /// The operation was interrupted or cancelled.
    case interrupted(String)
    /// The operation is not supported.
    case notSupported(String)
    /// A stale handle.
    case badHandle(String)
    /// Content that is not here, asked for by a process that never downloads (a desktop indexer).
    case notHere(String)
    /// A change inside a read-only part of the tree (a virtual folder).
    case readOnly(String)
    /// Local I/O failed.
    case io(String)
    /// The provider can no longer say what changed since a sync anchor (its history was trimmed, or the anchor
    /// comes from another remote): the caller resyncs what it knows, keeping every local change.
    case anchorExpired(String)

    /// The errno a system call reports for this error.
    public var errno: Errno {
        switch self {
        case .notFound: return .noSuchFileOrDirectory
        case .exists: return .fileExists
        case .notDirectory: return .notDirectory
        case .isDirectory: return .isDirectory
        case .notEmpty: return .directoryNotEmpty
        case .notPermitted: return .notPermitted
        case .accessDenied: return .permissionDenied
        case .nameTooLong: return .fileNameTooLong
        case .invalidArgument: return .invalidArgument
        case .fileTooLarge: return .fileTooLarge
        case .busy: return .resourceBusy
        case .offline: return .networkDown
        case .conflict: return .ioError
        case .providerFailure: return .ioError
        case .noSpace: return .noSpace
        case .noAttribute: return .noData
        case .range: return .outOfRange
        case .interrupted: return .interrupted
        case .notSupported: return .notSupported
        case .badHandle: return .badFileDescriptor
        case .notHere: return .resourceTemporarilyUnavailable
        case .readOnly: return .readOnlyFileSystem
        case .io: return .ioError
        case .anchorExpired: return .ioError
        }
    }

    /// Whether retrying the same provider call later may succeed.
    public var isRetryable: Bool {
        switch self {
        case .offline, .busy, .interrupted, .io: return true
        case .providerFailure(_, let retryable): return retryable
        default: return false
        }
    }

    /// Any error as Folio's: itself if it is one, otherwise `.io` with its description.
    public init(_ error: any Error) {
        if let error = error as? FolioError {
            self = error
        } else {
            self = .io("\(error)")
        }
    }

    /// Wraps a failed system call.
    public static func system(_ errno: Errno, _ context: String) -> FolioError {
        switch errno {
        case .noSuchFileOrDirectory: return .notFound(context)
        case .fileExists: return .exists(context)
        case .notDirectory: return .notDirectory(context)
        case .isDirectory: return .isDirectory(context)
        case .directoryNotEmpty: return .notEmpty(context)
        case .noSpace, .diskQuotaExceeded: return .noSpace(context)
        case .fileNameTooLong: return .nameTooLong(context)
        case .permissionDenied: return .accessDenied(context)
        case .notPermitted: return .notPermitted(context)
        case .invalidArgument: return .invalidArgument(context)
        case .fileTooLarge: return .fileTooLarge(context)
        case .noData: return .noAttribute(context)
        case .readOnlyFileSystem: return .readOnly(context)
        default: return .io("\(context): \(errno)")
        }
    }

    public var description: String {
        switch self {
        case .notFound(let s): return "not found: \(s)"
        case .exists(let s): return "already exists: \(s)"
        case .notDirectory(let s): return "not a folder: \(s)"
        case .isDirectory(let s): return "is a folder: \(s)"
        case .notEmpty(let s): return "folder not empty: \(s)"
        case .notPermitted(let s): return "not permitted: \(s)"
        case .accessDenied(let s): return "access denied: \(s)"
        case .nameTooLong(let s): return "name too long: \(s)"
        case .invalidArgument(let s): return "invalid argument: \(s)"
        case .fileTooLarge(let s): return "file too large: \(s)"
        case .busy(let s): return "busy: \(s)"
        case .offline(let s): return "provider offline: \(s)"
        case .conflict(let s): return "conflict: \(s)"
        case .providerFailure(let s, let retryable): return "provider failure (\(retryable ? "retryable" : "final")): \(s)"
        case .noSpace(let s): return "no space: \(s)"
        case .noAttribute(let s): return "no such attribute: \(s)"
        case .range(let s): return "buffer too small: \(s)"
        case .interrupted(let s): return "interrupted: \(s)"
        case .notSupported(let s): return "not supported: \(s)"
        case .badHandle(let s): return "bad handle: \(s)"
        case .notHere(let s): return "not here: \(s)"
        case .readOnly(let s): return "read-only: \(s)"
        case .io(let s): return "I/O error: \(s)"
        case .anchorExpired(let s): return "sync anchor expired: \(s)"
        }
    }
}
