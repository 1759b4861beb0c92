import FolioTestServers
import Foundation
import XCTest

/// Issue 15: a WebDAV account through `folio mount --remote http[s]://… --user NAME --password-file FILE` (or
/// `FOLIO_WEBDAV_PASSWORD`): the password never on a command line (the daemon's included), a password file others
/// can read refused with the fix, unsafe or malformed settings refused with a clear message and nothing mounted, a
/// wrong password a clear "authentication failed" at mount and in `folio status` later.
final class WebDAVAccountTests: WebDAVMountTestCase {
    static let password = "s3cret pass-\(UUID().uuidString.prefix(6))"

    override var serverAccount: ApacheServer.Credentials? { (user: "ann", password: Self.password) }

    /// A fixture for its paths only (state, mountpoint, runtime folder), for mounts made with the CLI; whatever
    /// gets mounted there is unmounted after the test.
    private func paths() throws -> MountFixture {
        let device = try MountFixture(remote: remoteURL)
        addTeardownBlock {
            device.folio("unmount '\(device.mountpoint)'", timeout: 30)
            device.tearDown()
        }
        return device
    }

    /// Writes `text` to a new file in `device`'s folder with `mode`.
    private func passwordFile(_ device: MountFixture, _ text: String, mode: Int) throws -> String {
        let path = device.root + "/password-\(UUID().uuidString.prefix(6))"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    /// `folio mount` in the background with `arguments` (the state and mountpoint of `device` added).
    private func folioMount(
        _ device: MountFixture, _ arguments: String, environment: [String: String] = [:]
    ) -> CommandResult {
        Shell.run(
            "'\(MountFixture.executable)' mount \(arguments) --state '\(device.state)' '\(device.mountpoint)'",
            timeout: 120, environment: device.environment.merging(environment) { $1 })
    }

    /// The command line of the daemon serving `device`'s mount, as `ps` shows it to every user.
    private func daemonCommandLine(_ device: MountFixture) -> String {
        let pid = device.status()["pid"] as? Int ?? -1
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
        return String(decoding: bytes.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    func testAPasswordFileLetsTheMountInAndAPasswordChangedLaterShowsInStatus() throws {
        let setup = try paths()
        let file = try passwordFile(setup, Self.password + "\n", mode: 0o600)
        let device = try mount(["--user", "ann", "--password-file", file])
        Shell.check("echo 'with a password' > '\(device.path("private.txt"))'")
        device.waitForUploads()
        XCTAssertEqual(serverText("private.txt"), "with a password\n")
        let commandLine = daemonCommandLine(device)
        XCTAssertTrue(commandLine.contains("--password-file"), commandLine)
        XCTAssertFalse(commandLine.contains(Self.password), "the password is not on the daemon's command line")

        // The password changes on the server: the poll is refused (401), and status says so and what to do.
        try Tool.htpasswd(
            (server.documentRoot as NSString).deletingLastPathComponent + "/htpasswd", user: "ann",
            password: "another one")
        Shell.check("echo 'written after' > '\(device.path("later.txt"))'")
        var status = ""
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) {
                status = device.folio("status '\(device.mountpoint)'").stdout
                return status.contains("AUTHENTICATION FAILED")
            }, status)
        XCTAssertTrue(status.contains("fix the user or the password"), status)
        XCTAssertFalse(status.contains(Self.password), status)
        XCTAssertEqual(Shell.check("cat '\(device.path("later.txt"))'"), "written after\n", "nothing is lost")
    }

    func testAWrongPasswordFailsTheMountWithTheReason() throws {
        let device = try paths()
        let file = try passwordFile(device, "not the password\n", mode: 0o600)
        let result = folioMount(device, "--remote '\(remoteURL)' --user ann --password-file '\(file)'")
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("authentication failed"), result.stderr)
        XCTAssertTrue(result.stderr.contains("check --user and the password file"), result.stderr)
        XCTAssertFalse(device.isMounted)
    }

    func testThePasswordFromTheEnvironmentNeverShowsInPs() throws {
        let device = try paths()
        let result = folioMount(
            device, "--remote '\(remoteURL)' --user ann", environment: ["FOLIO_WEBDAV_PASSWORD": Self.password])
        XCTAssertEqual(result.status, 0, result.stderr)
        Shell.check("echo 'from the environment' > '\(device.path("env.txt"))'")
        device.waitForUploads()
        XCTAssertEqual(serverText("env.txt"), "from the environment\n")
        XCTAssertFalse(daemonCommandLine(device).contains(Self.password))
        XCTAssertFalse(Shell.check("ps -eo args").contains(Self.password), "no process shows the password")
        XCTAssertEqual(device.folio("unmount '\(device.mountpoint)'").status, 0)
    }

    /// `Mount/mount.folio` (what mount(8) runs for `-t fuse.folio`) with the WebDAV options, run as mount(8) would.
    func testTheMountHelperTakesTheWebDAVOptions() throws {
        let device = try paths()
        let file = try passwordFile(device, Self.password + "\n", mode: 0o600)
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let helper = "sh '\(repository)/Mount/mount.folio'"
        let mounted = Shell.run(
            "\(helper) '\(remoteURL)' '\(device.mountpoint)' -o "
                + "'_netdev,username=ann,password_file=\(file),state=\(device.state),poll_interval=1'",
            timeout: 120, environment: device.environment.merging(["FOLIO": MountFixture.executable]) { $1 })
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        XCTAssertTrue(device.isMounted)
        Shell.check("echo 'through mount.folio' > '\(device.path("helper.txt"))'")
        device.waitForUploads()
        XCTAssertEqual(serverText("helper.txt"), "through mount.folio\n")
        XCTAssertFalse(daemonCommandLine(device).contains(Self.password))
        XCTAssertEqual(device.folio("unmount '\(device.mountpoint)'").status, 0)

        let refused = Shell.run(
            "\(helper) '\(remoteURL)' '\(device.mountpoint)' -o 'username=ann,password=\(Self.password)'",
            environment: ["FOLIO": MountFixture.executable])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("use password_file=FILE"), refused.stderr)
        XCTAssertFalse(device.isMounted)
    }

    /// `Mount/folio@.service` run as systemd runs it (no systemd here): its `Environment=`, then the documented
    /// `~/.config/folio/NAME.env` (`FOLIO_REMOTE`, `FOLIO_OPTIONS` with `--user` and `--password-file`), `%h` and
    /// `%i` filled in, `${VAR}` as one word and `$VAR` split at spaces; its `ExecStartPre=` lines, its `ExecStart=`
    /// in the foreground, and its `ExecStop=`.
    func testTheSystemdUnitMountsAServerNamedInItsEnvironmentFile() throws {
        let setup = try paths()
        let home = setup.root + "/home"
        let name = "Work"
        let file = try passwordFile(setup, Self.password + "\n", mode: 0o600)
        try FileManager.default.createDirectory(atPath: home + "/.config/folio", withIntermediateDirectories: true)
        let environmentFile = home + "/.config/folio/\(name).env"
        try "FOLIO_REMOTE=\(remoteURL)\nFOLIO_OPTIONS=--user ann --password-file \(file) --poll-interval 1\n"
            .write(toFile: environmentFile, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: environmentFile)

        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let unit = try String(contentsOfFile: repository + "/Mount/folio@.service", encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init)
        func values(_ key: String) -> [String] {
            lines.filter { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        var variables: [String: String] = [:]
        func expand(_ text: String) -> String {
            text.replacingOccurrences(of: "%h", with: home).replacingOccurrences(of: "%i", with: name)
        }
        for assignment in values("Environment") {
            let parts = expand(assignment).split(separator: "=", maxSplits: 1).map(String.init)
            variables[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        for path in values("EnvironmentFile") {
            let text = try String(contentsOfFile: expand(path.hasPrefix("-") ? String(path.dropFirst()) : path),
                encoding: .utf8)
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                variables[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
        }
        /// A command line of the unit as words: `${VAR}` one word, `$VAR` its value's words.
        func words(_ line: String) -> [String] {
            expand(line).split(separator: " ").flatMap { word -> [String] in
                if word.hasPrefix("${"), word.hasSuffix("}") {
                    return [variables[String(word.dropFirst(2).dropLast())] ?? ""]
                }
                if word.hasPrefix("$") {
                    return (variables[String(word.dropFirst())] ?? "").split(separator: " ").map(String.init)
                }
                return [String(word)]
            }.map { $0 == "/usr/local/bin/folio" ? MountFixture.executable : $0 }
        }
        for line in values("ExecStartPre") { Shell.check(words(line).joined(separator: " ")) }
        let mountpoint = home + "/Folio-\(name)"
        let start = words(try XCTUnwrap(values("ExecStart").first))
        XCTAssertEqual(start.suffix(1), [mountpoint])
        XCTAssertTrue(start.contains("--password-file") && !start.joined().contains(Self.password), "\(start)")

        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: start[0])
        daemon.arguments = Array(start.dropFirst())
        daemon.environment = setup.environment.merging(["HOME": home]) { $1 }
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        addTeardownBlock {
            if daemon.isRunning { daemon.terminate() }
            Shell.run("fusermount3 -u -z '\(mountpoint)' 2>/dev/null; true")
        }
        let mounted = {
            ((try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? "").contains(" \(mountpoint) ")
        }
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { mounted() }, "the unit's ExecStart did not mount")
        Shell.check("echo 'through the unit' > '\(mountpoint)/unit.txt'")
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { self.serverText("unit.txt") == "through the unit\n" })

        for line in values("ExecStop") { Shell.check(words(line).joined(separator: " ")) }
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { !daemon.isRunning }, "the daemon ends after ExecStop")
        XCTAssertEqual(daemon.terminationStatus, 0)
        XCTAssertFalse(mounted())
    }

    func testTheDefaultStateFolderOfAServerIsNamedAfterItsAddress() throws {
        let device = try paths()
        let home = device.root + "/home"
        let result = Shell.run(
            "'\(MountFixture.executable)' mount --remote '\(remoteURL)' --user ann '\(device.mountpoint)'",
            environment: device.environment.merging(["HOME": home, "FOLIO_WEBDAV_PASSWORD": Self.password]) { $1 })
        XCTAssertEqual(result.status, 0, result.stderr)
        let state = device.status()["stateDirectory"] as? String ?? ""
        XCTAssertTrue(state.hasPrefix(home + "/.local/state/folio/webdav-127.0.0.1-folio-"), state)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int, 0o700)
        XCTAssertEqual(device.folio("unmount '\(device.mountpoint)'").status, 0)
        // The same address mounted again finds the same state.
        let again = Shell.run(
            "'\(MountFixture.executable)' mount --remote '\(remoteURL.dropLast())' --user ann '\(device.mountpoint)'",
            environment: device.environment.merging(["HOME": home, "FOLIO_WEBDAV_PASSWORD": Self.password]) { $1 })
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(device.status()["stateDirectory"] as? String, state)
        XCTAssertEqual(device.folio("unmount '\(device.mountpoint)'").status, 0)
    }

    func testAPasswordFileOthersCanReadIsRefusedWithTheFix() throws {
        let device = try paths()
        for mode in [0o644, 0o640, 0o604] {
            let file = try passwordFile(device, Self.password, mode: mode)
            let result = folioMount(device, "--remote '\(remoteURL)' --user ann --password-file '\(file)'")
            XCTAssertNotEqual(result.status, 0, "mode \(String(mode, radix: 8))")
            XCTAssertTrue(result.stderr.contains("chmod 600 \(file)"), result.stderr)
            XCTAssertFalse(device.isMounted)
            XCTAssertEqual(
                try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int, mode,
                "the file is left as it was")
        }
        let missing = folioMount(
            device, "--remote '\(remoteURL)' --user ann --password-file '\(device.root)/no-such-file'")
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("cannot read the password file"), missing.stderr)
        let noPassword = folioMount(device, "--remote '\(remoteURL)' --user ann")
        XCTAssertNotEqual(noPassword.status, 0)
        XCTAssertTrue(noPassword.stderr.contains("needs a password"), noPassword.stderr)
        XCTAssertFalse(device.isMounted)
    }

    func testUnsafeOrMalformedRemotesAreRefusedWithAClearMessage() throws {
        let device = try paths()
        let file = try passwordFile(device, Self.password, mode: 0o600)
        let refusals: [(String, String)] = [
            // A password in clear text over the network.
            ("--remote http://192.0.2.10/dav/ --user ann --password-file '\(file)'", "refusing to send the password"),
            ("--remote 'http://'", "is not an http:// or https:// address"),
            ("--remote 'ftp://127.0.0.1/dav/'", "is not an http:// or https:// address"),
            ("--remote 'http://ann:pw@127.0.0.1/dav/'", "without a query, fragment or credentials"),
            ("--remote '\(remoteURL)' --ca-file '\(file)'", "is for https:// addresses"),
            ("--remote '\(device.root)/folder' --user ann", "are for a WebDAV remote"),
        ]
        for (arguments, message) in refusals {
            let result = folioMount(device, arguments)
            XCTAssertNotEqual(result.status, 0, arguments)
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertFalse(device.isMounted, arguments)
        }
    }
}
