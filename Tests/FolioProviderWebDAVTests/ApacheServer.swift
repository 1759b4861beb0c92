import Foundation
import XCTest

/// A private Apache httpd with `mod_dav` on a loopback port, over a throwaway document root: the reference WebDAV
/// server of the tests (Debian `apache2`, installed by `scripts/bootstrap`). Started in the foreground as a child
/// process, ready when it answers; ``stop()`` ends it and removes its folder.
final class ApacheServer {
    /// The folder the server serves.
    let documentRoot: String
    /// `http://127.0.0.1:PORT`.
    let baseURL: URL
    private let folder: String
    private let process: Process

    /// Starts a server (trying a few ports), waiting at most 10 s for it to answer.
    init() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/apache2") else {
            throw XCTSkip("apache2 is not installed (scripts/bootstrap installs it)")
        }
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("folio-apache-\(UUID().uuidString.prefix(8))").path
        documentRoot = folder + "/root"
        try FileManager.default.createDirectory(atPath: folder + "/lock", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: documentRoot, withIntermediateDirectories: true)
        // The server's children run as www-data: they must reach the root and keep their lock database.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: documentRoot)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder + "/lock")
        var lastError = "no port tried"
        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<40_000)
            let config = folder + "/httpd.conf"
            try Self.configuration(folder: folder, root: documentRoot, port: port)
                .write(toFile: config, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/apache2")
            process.arguments = ["-f", config, "-DFOREGROUND"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            let url = URL(string: "http://127.0.0.1:\(port)")!
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline {
                if Self.answers(url) {
                    self.process = process
                    baseURL = url
                    return
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            lastError = (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? "no error log"
        }
        try? FileManager.default.removeItem(atPath: folder)
        throw ServerDidNotStart(log: String(lastError.suffix(500)))
    }

    /// The server could not be started; its error log says why.
    struct ServerDidNotStart: Error, CustomStringConvertible {
        let log: String
        var description: String { "apache2 did not start: \(log)" }
    }

    /// Ends the server and removes its folder.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The body and status of a request made with curl (`PROPFIND`, `PUT`…), with extra headers.
    func request(_ method: String, _ path: String, headers: [String] = []) throws -> (status: Int, body: Data) {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        let output = folder + "/reply-\(UUID().uuidString.prefix(8))"
        curl.arguments = ["-s", "-o", output, "-w", "%{http_code}", "-X", method]
            + headers.flatMap { ["-H", $0] } + [baseURL.absoluteString + path]
        let pipe = Pipe()
        curl.standardOutput = pipe
        try curl.run()
        let code = pipe.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        let body = (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data()
        try? FileManager.default.removeItem(atPath: output)
        return (Int(String(decoding: code, as: UTF8.self)) ?? 0, body)
    }

    private static func answers(_ url: URL) -> Bool {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "-o", "/dev/null", "--max-time", "1", url.absoluteString + "/"]
        guard (try? curl.run()) != nil else { return false }
        curl.waitUntilExit()
        return curl.terminationStatus == 0
    }

    private static func configuration(folder: String, root: String, port: Int) -> String {
        let modules = "/usr/lib/apache2/modules"
        return """
            ServerRoot \(folder)
            ServerName 127.0.0.1
            Listen 127.0.0.1:\(port)
            LoadModule mpm_event_module \(modules)/mod_mpm_event.so
            LoadModule authz_core_module \(modules)/mod_authz_core.so
            LoadModule dav_module \(modules)/mod_dav.so
            LoadModule dav_fs_module \(modules)/mod_dav_fs.so
            User www-data
            Group www-data
            PidFile \(folder)/httpd.pid
            ErrorLog \(folder)/error.log
            DAVLockDB \(folder)/lock/davlock
            DocumentRoot \(root)
            <Directory \(root)>
                Dav On
                Require all granted
            </Directory>

            """
    }
}
