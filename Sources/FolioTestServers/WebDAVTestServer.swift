import Foundation

/// A real WebDAV server a test started on loopback over a throwaway document root (``ApacheServer``,
/// ``RcloneServer``, ``WsgiDAVServer``): what the provider tests and the server-facts probe need of any of them.
public protocol WebDAVTestServer: AnyObject {
    /// `http[s]://127.0.0.1:PORT`: the root of what the server serves.
    var baseURL: URL { get }
    /// The folder the server serves (its URL path `/` unless said otherwise).
    var documentRoot: String { get }
    /// A curl client set up for this server: its credentials and certificate authority, if any.
    var curl: Curl { get }
    /// Kills the server at once (SIGKILL to all its processes: an outage, connections cut mid-request), keeping
    /// its folder and port for ``start()``.
    func kill()
    /// Starts the server again after ``kill()``, on the same port and root, and waits until it answers.
    func start() throws
    /// Ends the server and removes its folder; safe to call more than once.
    func stop()
}

extension WebDAVTestServer {
    /// A request to `path` (from the server's root, starting with `/`, percent-encoded) made with ``curl``.
    public func request(
        _ method: String, _ path: String, headers: [String] = [], body: Data? = nil
    ) throws -> Curl.Reply {
        try curl.request(method, baseURL.absoluteString + path, headers: headers, body: body)
    }
}
