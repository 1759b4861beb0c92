import FolioCore
import Foundation

/// Where a WebDAV remote is and how to reach it: the collection whose members are the containers, the account,
/// and the trust settings. Made only through ``init(url:user:password:caFile:insecure:)``, which refuses what
/// would put the account at risk.
public struct WebDAVConfiguration: Sendable {
    /// The collection that holds the containers, `http[s]://HOST[:PORT]/PATH/` (always ending with `/`).
    public let baseURL: URL
    /// The account's name for Basic authentication, if any.
    public let user: String?
    /// The account's password (read from a 0600 file or the environment, never from the command line).
    public let password: String?
    /// A PEM file of certificate authorities to trust instead of the system's, for `https`.
    public let caFile: String?
    /// How long one request may take before it counts as a failure of the connection.
    public var requestTimeout: Duration = .seconds(60)
    /// How many times one call tries a request the server refused for a passing reason (503, 429, a dropped
    /// connection) before it gives the failure to its caller (whose own retries go on forever).
    public var attempts = 3
    /// A folder whose last listing began less than this long ago (a reader's enumeration, or an earlier look for
    /// changes) is not listed again by a look for changes: that listing is as fresh as this one would be, and a
    /// change made after it began is found by the next look. The daemon sets it to the poll interval; zero lists
    /// every folder of the working set at every look.
    public var freshListing: Duration = .zero

    /// Checks and takes the settings: `url` must be `http` or `https` with a host and no query; Basic
    /// authentication over plain `http` to a host that is not loopback is refused unless `insecure` says so
    /// (the password would cross the network readable by anyone on the way).
    public init(
        url: String, user: String? = nil, password: String? = nil, caFile: String? = nil, insecure: Bool = false
    ) throws(FolioError) {
        guard var components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw .invalidArgument("\(url) is not an http:// or https:// address of a WebDAV collection")
        }
        guard components.query == nil, components.fragment == nil, components.user == nil,
            components.password == nil
        else {
            throw .invalidArgument(
                "\(url): give the collection's address without a query, fragment or credentials (use --user and "
                    + "--password-file)")
        }
        if !components.path.hasSuffix("/") { components.path += "/" }
        guard let baseURL = components.url else { throw .invalidArgument("\(url) is not a usable address") }
        if user != nil, scheme == "http", !insecure, !Self.isLoopback(host) {
            throw .invalidArgument(
                "refusing to send the password for \(user ?? "") in clear text to \(host) over http://: use "
                    + "https://, or --insecure if the network is trusted")
        }
        if user == nil, password != nil {
            throw .invalidArgument("a password was given without --user")
        }
        if let caFile, scheme != "https" {
            throw .invalidArgument("--ca-file \(caFile) is for https:// addresses")
        }
        self.baseURL = baseURL
        self.user = user
        self.password = password
        self.caFile = caFile
    }

    /// The collection's path on the server, percent-encoded, ending with `/`.
    public var basePath: String { baseURL.path(percentEncoded: true).hasSuffix("/")
        ? baseURL.path(percentEncoded: true) : baseURL.path(percentEncoded: true) + "/" }

    /// The address of `path` (an encoded absolute path) on the server.
    func url(_ path: String) -> String {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.percentEncodedPath = path
        return components.string ?? baseURL.absoluteString
    }

    /// Whether `host` is this machine: `localhost` or a loopback address.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare.hasPrefix("127.") || bare == "::1"
    }
}
