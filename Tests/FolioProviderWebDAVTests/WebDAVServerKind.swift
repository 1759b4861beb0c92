import FolioTestServers
import Foundation

/// The real WebDAV servers the tests can start, for suites that run against each of them in turn (the provider
/// conformance suite): `for kind in WebDAVServerKind.allCases { let server = try kind.start(); defer { … } }`.
enum WebDAVServerKind: String, CaseIterable {
    /// Apache httpd with `mod_dav_fs`, the reference (``ApacheServer``).
    case apache
    /// `rclone serve webdav` (``RcloneServer``).
    case rclone
    /// wsgidav on cheroot (``WsgiDAVServer``).
    case wsgidav

    /// Starts a server of this kind on loopback, anonymous or letting in only `user` (Basic auth).
    func start(user: (name: String, password: String)? = nil) throws -> WebDAVTestServer {
        switch self {
        case .apache:
            try startOrSkip { try ApacheServer(basicAuth: user.map { (user: $0.name, password: $0.password) }) }
        case .rclone: try startOrSkip { try RcloneServer(user: user) }
        case .wsgidav: try WsgiDAVServer(user: user)
        }
    }
}
