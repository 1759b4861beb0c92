import FolioCore

/// What a status code a WebDAV server answered means to Folio: the one place statuses become ``FolioError``s.
enum WebDAVStatus {
    /// Whether `status` is a success (2xx).
    static func succeeded(_ status: Int) -> Bool { (200..<300).contains(status) }

    /// The error a failed answer is, for the request described by `what` (`PUT /dav/Docs/a.txt`).
    static func error(_ status: Int, _ what: String) -> FolioError {
        switch status {
        case 401:
            return .accessDenied(
                "authentication failed for \(what): check --user and the password file (the server answered 401)")
        case 403:
            return .accessDenied("the server refuses \(what) (403)")
        case 404, 410:
            return .notFound("\(what): the server has no such resource (\(status))")
        case 409:
            return .notFound("\(what): the parent collection is missing on the server (409)")
        case 412:
            return .conflict("\(what): the resource changed on the server (412)")
        case 413:
            return .fileTooLarge("\(what): the server refuses a body this large (413)")
        case 414:
            return .nameTooLong("\(what): the address is too long for the server (414)")
        case 423:
            return .busy("\(what): the resource is locked on the server (423)")
        case 507:
            return .noSpace("\(what): the server is out of space (507): free some space on the server")
        case 300..<400:
            return .providerFailure(
                "\(what): the server redirects (\(status)); redirects are not followed: give the collection's "
                    + "own address", retryable: false)
        case 429, 500..<600:
            return .providerFailure("\(what): the server failed (\(status))", retryable: true)
        default:
            return .providerFailure("\(what): the server answered \(status)", retryable: false)
        }
    }
}
