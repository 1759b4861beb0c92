import Foundation

/// A private `rclone serve webdav` on a loopback port over a throwaway root (Debian `rclone`, installed by
/// `scripts/bootstrap`), anonymous or with one user (an `htpasswd` file, so the password is not in `ps`). Started
/// as a child process, ready when it serves a file of its own root; ``stop()`` ends it and removes its folder.
///
/// What rclone (Debian bookworm's 1.60, over a local folder, default flags) sends and does (measured by
/// `RcloneServerTests`):
/// - ETags: strong `"…"` on files (hex of the modification time in ns and the size, not of the content; `--etag-hash`
///   would change that), also in `PUT` and `GET` replies; none on collections. `getlastmodified` on files and
///   collections. Elements in the `D:` prefix, `<D:collection xmlns:D="DAV:"/>`.
/// - No `getctag`, no collection ETag, `sync-collection` REPORT: 400 Bad Request. Changes can only be found by
///   listing folders again.
/// - Conditional headers ignored: a `PUT` with a wrong `If-Match`, or with `If-None-Match: *` on an existing file,
///   overwrites it (201), and a `DELETE` with a wrong `If-Match` deletes (204). Only `MOVE` with `Overwrite: F`
///   onto an existing file is refused (412). So a concurrent change between a client's check and its `PUT` is
///   overwritten on this server.
/// - Dead properties refused: a `PROPPATCH` in a custom namespace answers 207 with a 403 propstat; nothing kept.
/// - Its VFS caches folder listings (`--dir-cache-time`, 5 min by default): a file put in the root behind its back
///   after the folder was listed is neither listed nor served (404) until the cache expires; changes made through
///   the server show at once. `dirCacheTime: "0s"` makes it see the root as it is at every request.
public final class RcloneServer: WebDAVTestServer {
    /// The folder the server serves, as `/`.
    public let documentRoot: String
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL
    /// curl set up with the server's credentials.
    public let curl: Curl
    private let folder: String
    private let server: ServerProcess

    /// Starts a server (trying a few ports), waiting at most 15 s for it to answer; with `user`, only that user
    /// and password are let in (Basic auth); `dirCacheTime` (`"0s"`) replaces rclone's 5 min listing cache.
    public init(user: (name: String, password: String)? = nil, dirCacheTime: String? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone") else {
            throw ServerUnavailable("rclone is not installed (scripts/bootstrap installs it)")
        }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("folio-rclone-\(UUID().uuidString.prefix(8))").path
        let documentRoot = folder + "/root"
        self.folder = folder
        self.documentRoot = documentRoot
        do {
            try FileManager.default.createDirectory(atPath: documentRoot, withIntermediateDirectories: true)
            // An empty configuration of its own, so no user's remotes or settings are read.
            try Data().write(to: URL(fileURLWithPath: folder + "/rclone.conf"))
            var curl = Curl(scratch: folder)
            var options = dirCacheTime.map { ["--dir-cache-time", $0] } ?? []
            if let user {
                guard FileManager.default.isExecutableFile(atPath: "/usr/bin/htpasswd") else {
                    throw ServerUnavailable("htpasswd is not installed (scripts/bootstrap installs apache2-utils)")
                }
                try Tool.htpasswd(folder + "/htpasswd", user: user.name, password: user.password)
                options += ["--htpasswd", folder + "/htpasswd"]
                curl.credentials = Curl.Credentials(user: user.name, password: user.password)
            }
            self.curl = curl
            let log = folder + "/rclone.log"
            server = try ServerProcess.start(
                name: "rclone serve webdav", documentRoot: documentRoot, curl: curl,
                log: { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "no log" }
            ) { port in
                try ServerProcess.process(
                    "/usr/bin/rclone",
                    ["serve", "webdav", documentRoot, "--addr", "127.0.0.1:\(port)"]
                        + ["--config", folder + "/rclone.conf"] + options,
                    logFile: log)
            }
            baseURL = server.baseURL
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// Kills the server and its children at once (SIGKILL), keeping its folder and port for ``start()``.
    public func kill() {
        server.kill()
    }

    /// Starts the server again after ``kill()``, on the same port and root, and waits until it answers.
    public func start() throws {
        try server.start()
    }

    /// Ends the server and removes its folder.
    public func stop() {
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
