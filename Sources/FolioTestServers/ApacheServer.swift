import Foundation

/// A private Apache httpd with `mod_dav` on a loopback port, over a throwaway document root: the reference WebDAV
/// server of the tests (Debian `apache2`, `apache2-utils` for `htpasswd`, `openssl`; installed by
/// `scripts/bootstrap`). Started in the foreground as a child process, ready when it serves a file of its own root;
/// ``stop()`` ends it, unmounts its small root if it had one, and removes its folder.
///
/// Variants: Basic auth on one location (`basicAuth`, an `htpasswd` file with a bcrypt entry), TLS with a
/// self-signed certificate made for the server (`tls`, ``caFile``), and a document root on a tmpfs of a given
/// size (`rootSize`, needs root).
///
/// Every request it answered is in its access log (``accessLog()``): method, path, status and the request's
/// `Range`, `If-Match`, `If-None-Match` and `Content-Length` headers, one line each, written once the answer is sent
/// (so a request cut short by ``kill()`` is not in it, nor, at times, one that had just been carried out).
///
/// What Apache 2.4 `mod_dav_fs` sends and does (measured by `ApacheServerTests`; Debian's 2.4.71):
/// - ETags: strong `"size-mtime"` for a file changed more than a second before the request, weak `W/"…"` for one
///   changed within the last second (or dated in the future); collections have one too (weak or strong the same
///   way). A weak ETag never matches `If-Match` (strong comparison): 412 even when it is the current one. A `PUT`
///   reply carries no `ETag` header, a `GET` reply the same ETag as the listing. `getlastmodified` on files and
///   collections. Property elements prefixed `lp1:`.
/// - A `PUT` bigger than the free space: 507 Insufficient Storage; the file's previous content is kept, and the
///   space the failed upload took is freed.
/// - Killed (SIGKILL to all its processes) and started again: files and dead properties are all there.
/// - A collection's ETag follows only its own entries: a change two levels below leaves it as it was; no `getctag`;
///   `sync-collection` REPORT: 501 ("REPORT not supported").
/// - Conditional requests honoured: `PUT` with a wrong `If-Match` or `If-None-Match: *` on an existing file, and
///   `DELETE` with a wrong `If-Match`: 412, nothing changed; `MOVE` with `Overwrite: F` onto a file: 412.
/// - Dead properties (`PROPPATCH` in any namespace) kept (in `.DAV/` beside the files) and moved with the file,
///   after it: a `MOVE` renames the file first and its properties then (a server killed between the two leaves the
///   file at its new name without them).
///
/// A file whose name ends in `.slow` is served at ``slowBytesPerSecond`` (`mod_ratelimit`): a download a test can
/// catch half way on loopback.
public final class ApacheServer: WebDAVTestServer {
    /// A user and password for Basic auth.
    public typealias Credentials = (user: String, password: String)

    /// The rate at which a file named `*.slow` is served (`mod_ratelimit` counts in KiB/s).
    public static let slowBytesPerSecond = 8 << 20

    /// The folder the server serves.
    public let documentRoot: String
    /// `http://127.0.0.1:PORT`, or `https://…` with `tls`.
    public let baseURL: URL
    /// The PEM certificate a client must trust (self-signed: the certificate is its own CA), with `tls`.
    public let caFile: String?
    /// curl set up with the server's credentials and CA.
    public let curl: Curl
    private let folder: String
    private let tmpfs: Bool
    /// The access log (``accessLog()``).
    public var accessLogPath: String { folder + "/access.log" }
    private let server: ServerProcess

    /// Starts a server (trying a few ports), waiting at most 15 s for it to answer.
    /// - Parameters:
    ///   - basicAuth: when set, `protectedLocation` needs Basic auth with this user and password.
    ///   - protectedLocation: the URL path Basic auth protects (the whole server by default).
    ///   - tls: serve `https` with a self-signed certificate for 127.0.0.1 made now with `openssl` (see ``caFile``).
    ///   - rootSize: when set (`"4m"`), the document root is a tmpfs of this size.
    public init(
        basicAuth: Credentials? = nil, protectedLocation: String = "/", tls: Bool = false, rootSize: String? = nil
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/apache2") else {
            throw ServerUnavailable("apache2 is not installed (scripts/bootstrap installs it)")
        }
        if basicAuth != nil && !FileManager.default.isExecutableFile(atPath: "/usr/bin/htpasswd") {
            throw ServerUnavailable("htpasswd is not installed (scripts/bootstrap installs apache2-utils)")
        }
        if tls && !FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") {
            throw ServerUnavailable("openssl is not installed (scripts/bootstrap installs it)")
        }
        if rootSize != nil && getuid() != 0 {
            throw ServerUnavailable("a tmpfs document root needs root (to mount it)")
        }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("folio-apache-\(UUID().uuidString.prefix(8))").path
        let documentRoot = folder + "/root"
        self.folder = folder
        self.documentRoot = documentRoot
        tmpfs = rootSize != nil
        var mounted = false
        do {
            try FileManager.default.createDirectory(atPath: folder + "/lock", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: documentRoot, withIntermediateDirectories: true)
            if let rootSize {
                try Tool.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(rootSize)", "folio-test", documentRoot])
                mounted = true
            }
            // The server's children run as www-data: they must reach the root and keep their lock database.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: documentRoot)
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder + "/lock")
            var curl = Curl(scratch: folder)
            if let basicAuth {
                try Tool.htpasswd(folder + "/htpasswd", user: basicAuth.user, password: basicAuth.password)
                curl.credentials = Curl.Credentials(user: basicAuth.user, password: basicAuth.password)
            }
            if tls {
                try Tool.run("/usr/bin/openssl", [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                ])
                curl.caFile = folder + "/cert.pem"
            }
            caFile = curl.caFile
            self.curl = curl
            let options = Options(
                folder: folder, root: documentRoot, auth: basicAuth == nil ? nil : protectedLocation, tls: tls)
            server = try ServerProcess.start(
                name: "apache2", scheme: tls ? "https" : "http", documentRoot: documentRoot, curl: curl,
                log: { (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? "no error log" }
            ) { port in
                let config = folder + "/httpd.conf"
                try Self.configuration(options, port: port).write(toFile: config, atomically: true, encoding: .utf8)
                return try ServerProcess.process(
                    "/usr/sbin/apache2", ["-f", config, "-DFOREGROUND"], logFile: folder + "/stderr.log")
            }
            baseURL = server.baseURL
        } catch {
            if mounted { Self.unmount(documentRoot) }
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

    /// Ends the server, unmounts its tmpfs root if it has one, and removes its folder.
    public func stop() {
        server.stop()
        if tmpfs { Self.unmount(documentRoot) }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// What goes into the configuration besides the port.
    private struct Options {
        let folder: String
        let root: String
        /// The location Basic auth protects, if any.
        let auth: String?
        let tls: Bool
    }

    private static func configuration(_ options: Options, port: Int) -> String {
        let modules = "/usr/lib/apache2/modules"
        let folder = options.folder
        var text = """
            ServerRoot \(folder)
            ServerName 127.0.0.1
            DefaultRuntimeDir \(folder)
            Listen 127.0.0.1:\(port)
            LoadModule mpm_event_module \(modules)/mod_mpm_event.so
            LoadModule authz_core_module \(modules)/mod_authz_core.so
            LoadModule dav_module \(modules)/mod_dav.so
            LoadModule dav_fs_module \(modules)/mod_dav_fs.so
            User www-data
            Group www-data
            PidFile \(folder)/httpd.pid
            ErrorLog \(folder)/error.log
            LogFormat "\(AccessLogEntry.format)" folio
            CustomLog \(folder)/access.log folio
            DAVLockDB \(folder)/lock/davlock
            DocumentRoot \(options.root)
            <Directory \(options.root)>
                Dav On
                Require all granted
            </Directory>
            LoadModule env_module \(modules)/mod_env.so
            LoadModule ratelimit_module \(modules)/mod_ratelimit.so
            <LocationMatch "\\.slow$">
                SetOutputFilter RATE_LIMIT
                SetEnv rate-limit \(slowBytesPerSecond >> 10)
            </LocationMatch>

            """
        if let location = options.auth {
            text += """
                LoadModule auth_basic_module \(modules)/mod_auth_basic.so
                LoadModule authn_core_module \(modules)/mod_authn_core.so
                LoadModule authn_file_module \(modules)/mod_authn_file.so
                LoadModule authz_user_module \(modules)/mod_authz_user.so
                <Location "\(location)">
                    AuthType Basic
                    AuthName "Folio test"
                    AuthBasicProvider file
                    AuthUserFile \(folder)/htpasswd
                    Require valid-user
                </Location>

                """
        }
        if options.tls {
            text += """
                LoadModule ssl_module \(modules)/mod_ssl.so
                SSLEngine on
                SSLCertificateFile \(folder)/cert.pem
                SSLCertificateKeyFile \(folder)/key.pem

                """
        }
        return text
    }

    /// Unmounts the tmpfs at `path` (lazily if something still holds it).
    private static func unmount(_ path: String) {
        if (try? Tool.run("/usr/bin/umount", [path])) == nil { try? Tool.run("/usr/bin/umount", ["-l", path]) }
    }
}
