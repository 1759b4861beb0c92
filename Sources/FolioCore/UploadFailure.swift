/// What a failed upload needs before it can succeed (DESIGN.md §2 "Upload"): a failure that can clear by itself
/// is retried with a capped backoff until it does, never made permanent; only a failure that needs the user makes
/// the item `failed` (retried at mount and by `folio retry`).
public enum UploadFailure: Equatable, Sendable {
    /// The failure can clear by itself (offline, no space, busy, a server error, the remote's own folders
    /// missing): the upload waits and is retried. `remedy` says what it waits for.
    case willClear(remedy: String)
    /// Only the user can clear it (a name the remote refuses, access denied): the item is `failed` until it is
    /// retried. `remedy` says what to do.
    case needsUser(remedy: String)

    /// How to treat an upload that failed with `error`.
    public init(_ error: FolioError) {
        let retry = "then run `folio retry PATH` (or save it again)"
        switch error {
        case .offline:
            self = .willClear(remedy: "waits until the remote is reachable again")
        case .noSpace:
            self = .willClear(remedy: "the remote is out of space: free some there; retried until it fits")
        case .notFound:
            // Where an item the remote should have is gone, the core creates it again; what is left is a folder
            // of the remote's own (a container, the parent folder) that is missing for now.
            self = .willClear(remedy: "a folder of the remote is missing: retried until it is back")
        case .busy, .interrupted, .io, .conflict, .badHandle, .range, .noAttribute, .anchorExpired, .notHere:
            self = .willClear(remedy: "retried until it goes through")
        case .providerFailure(_, let retryable):
            self = retryable
                ? .willClear(remedy: "retried until the provider accepts it")
                : .needsUser(remedy: "the provider refuses the upload: see the error, \(retry)")
        case .accessDenied, .notPermitted:
            self = .needsUser(remedy: "the remote refuses access: give write access on the remote, \(retry)")
        case .readOnly:
            self = .needsUser(remedy: "the remote is read-only: make it writable, \(retry)")
        case .nameTooLong, .invalidArgument:
            self = .needsUser(remedy: "the remote refuses the name: rename the item, \(retry)")
        case .exists:
            self = .needsUser(remedy: "the remote has another item of that name: rename one of them, \(retry)")
        case .fileTooLarge:
            self = .needsUser(remedy: "the remote cannot store a file this large: make it smaller, \(retry)")
        case .notDirectory, .isDirectory, .notEmpty, .notSupported:
            self = .needsUser(remedy: "the remote cannot store the item as it is: change it, \(retry)")
        }
    }

    /// Whether only the user can clear the failure.
    public var needsUser: Bool {
        if case .needsUser = self { return true }
        return false
    }

    /// What would clear the failure, for `folio status`.
    public var remedy: String {
        switch self {
        case .willClear(let remedy), .needsUser(let remedy): return remedy
        }
    }

    /// The reason a `failed` item keeps (and `folio status` shows): the error and what to do about it.
    public static func failedReason(_ error: FolioError) -> String {
        "\(error) (needs you: \(UploadFailure(error).remedy))"
    }
}
