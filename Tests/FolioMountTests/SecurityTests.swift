import Foundation
import XCTest

/// The boundaries of SECURITY.md, each tried by a second local user (or a hostile client) against a real mount:
/// the runtime folder, the control socket in both directions, the state folder's modes, the mode bits of an
/// `--allow-other` mount, and what another user's `folio` says.
final class SecurityTests: MountTestCase {
    override var mountArguments: [String] { ["--allow-other"] }
    /// The daemon runs with the umask most users have, which would leave its files readable by everyone.
    override var daemonLauncher: [String] { ["/bin/sh", "-c", "umask 022 && exec \"$@\"", "sh"] }

    /// The runtime folder of the other user (its own, 0700).
    private func otherRuntime() throws -> String {
        let (uid, gid) = try OtherUser.ensure()
        let folder = fixture.root + "/other-run"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        XCTAssertEqual(chown(folder, uid, gid), 0)
        XCTAssertEqual(chmod(folder, 0o700), 0)
        return folder
    }

    /// The control socket of the fixture's mount.
    private var socketPath: String {
        let folder = fixture.runtime + "/folio"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return folder + "/" + (names.first { $0.hasSuffix(".sock") } ?? "missing.sock")
    }

    /// Starts `arguments` as a process of its own (ended at teardown, also after a failure), with its output
    /// in `log`. Not through `Shell`: a command it leaves running would hold it until the command ends.
    private func background(_ arguments: [String], log: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        addTeardownBlock {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            try? handle.close()
        }
    }

    /// A runtime folder another user made first (0777), or a symbolic link to one: Folio neither mounts nor
    /// talks through it, says which folder and what to do, and puts nothing there.
    func testSquattedRuntimeFolderIsRefused() throws {
        _ = try otherRuntime()
        let squat = fixture.root + "/squat"
        try FileManager.default.createDirectory(atPath: squat, withIntermediateDirectories: true)
        chmod(squat, 0o777)
        try OtherUser.run("mkdir -m 777 '\(squat)/folio' && chmod 777 '\(squat)/folio'", runtime: squat)
        let second = fixture.root + "/mnt2"
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        addTeardownBlock { Shell.run("fusermount3 -u -z '\(second)' 2>/dev/null; true") }
        let environment = ["XDG_RUNTIME_DIR": squat, "HOME": fixture.root]
        let mount = Shell.run(
            "'\(MountFixture.executable)' mount --remote '\(fixture.root)/remote2' --state '\(fixture.root)/state2' "
                + "'\(second)'", environment: environment)
        XCTAssertNotEqual(mount.status, 0, "mounted with a control socket in another user's folder")
        XCTAssertTrue(mount.stderr.contains("\(squat)/folio"), mount.stderr)
        XCTAssertTrue(mount.stderr.contains("belongs to \(OtherUser.name)"), mount.stderr)
        XCTAssertTrue(mount.stderr.contains("XDG_RUNTIME_DIR"), "says what to do: \(mount.stderr)")
        let status = Shell.run(
            "'\(MountFixture.executable)' status '\(fixture.mountpoint)'", environment: environment)
        XCTAssertNotEqual(status.status, 0)
        XCTAssertTrue(status.stderr.contains("\(squat)/folio"), status.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: squat + "/folio"), [], "nothing put there")

        XCTAssertTrue(status.stderr.contains("Remove \(squat)/folio"), "says what to do: \(status.stderr)")

        // Without XDG_RUNTIME_DIR (ssh, cron, CI) the folder is /tmp/folio-UID: made first by someone else, it
        // is refused the same way, before anything is mounted.
        let (uid, _) = try OtherUser.ensure()
        let otherRun = try otherRuntime()
        let tmpFolder = "/tmp/folio-\(uid)"
        Shell.run("rm -rf '\(tmpFolder)' && mkdir -m 777 '\(tmpFolder)' && chmod 777 '\(tmpFolder)'")
        addTeardownBlock { Shell.run("rm -rf '\(tmpFolder)'") }
        let otherMount = try OtherUser.run(
            "mkdir '\(otherRun)/mnt' && '\(MountFixture.executable)' mount --remote '\(otherRun)/remote' "
                + "--state '\(otherRun)/state' '\(otherRun)/mnt'", runtime: "")
        XCTAssertNotEqual(otherMount.status, 0, "mounted with a control socket in a folder made by someone else")
        XCTAssertTrue(otherMount.stderr.contains("the runtime folder \(tmpFolder) is not safe"), otherMount.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmpFolder), [], "nothing put there")

        // A symbolic link, even to the user's own private folder, is refused too.
        let linked = fixture.root + "/linked"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: linked + "/folio", withDestinationPath: fixture.runtime + "/folio")
        let viaLink = Shell.run(
            "'\(MountFixture.executable)' status '\(fixture.mountpoint)'", environment: ["XDG_RUNTIME_DIR": linked])
        XCTAssertNotEqual(viaLink.status, 0)
        XCTAssertTrue(viaLink.stderr.contains("symbolic link"), viaLink.stderr)
    }

    /// Another user's listener put in place of the control socket: the client checks who serves it
    /// (`SO_PEERCRED`) and sends nothing, not even the command's name.
    func testClientRefusesAnotherUsersListenerAndSendsNothing() throws {
        let otherRun = try otherRuntime()
        let listener = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(sys.argv[1]); s.listen(1); s.settimeout(60)
            c, _ = s.accept(); c.settimeout(30)
            received = b''
            try:
                c.sendall(b'{"ok":true,"pid":1,"mountpoint":"/"}\\n')
                while True:
                    chunk = c.recv(65536)
                    if not chunk: break
                    received += chunk
            except OSError:
                pass
            open(sys.argv[2] + '.tmp', 'w').write(str(len(received)))
            import os; os.rename(sys.argv[2] + '.tmp', sys.argv[2])
            """
        try listener.write(toFile: otherRun + "/listener.py", atomically: true, encoding: .utf8)
        chmod(otherRun + "/listener.py", 0o644)
        let (uid, gid) = try OtherUser.ensure()
        try background(
            [
                "/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "/usr/bin/python3",
                otherRun + "/listener.py", otherRun + "/l.sock", otherRun + "/received",
            ], log: fixture.root + "/listener.log")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { FileManager.default.fileExists(atPath: otherRun + "/l.sock") })
        let socket = socketPath
        Shell.check("mv -f '\(otherRun)/l.sock' '\(socket)'")
        let status = fixture.folio("status '\(fixture.mountpoint)'")
        XCTAssertNotEqual(status.status, 0, "talked to another user's listener: \(status.stdout)")
        XCTAssertTrue(status.stderr.contains("served by \(OtherUser.name)"), status.stderr)
        XCTAssertTrue(status.stderr.contains("nothing was sent"), status.stderr)
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { FileManager.default.fileExists(atPath: otherRun + "/received") })
        XCTAssertEqual(try String(contentsOfFile: otherRun + "/received", encoding: .utf8), "0", "bytes reached it")
    }

    /// An answer that is not a daemon's (garbage, or `{"ok":true}` with nothing in it) is an error, not a status
    /// of question marks.
    func testClientRejectsAnswersOfTheWrongShape() throws {
        let socket = socketPath
        for answer in [#"{"ok":true}"#, "hello"] {
            let script = """
                import socket, sys, os
                try: os.unlink(sys.argv[1])
                except FileNotFoundError: pass
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.bind(sys.argv[1]); s.listen(1); s.settimeout(60)
                open(sys.argv[3], 'w').close()
                c, _ = s.accept(); c.recv(65536); c.sendall(sys.argv[2].encode() + b'\\n'); c.close()
                """
            try script.write(toFile: fixture.root + "/answer.py", atomically: true, encoding: .utf8)
            let ready = fixture.root + "/answer-ready"
            try? FileManager.default.removeItem(atPath: ready)
            try background(
                ["/usr/bin/python3", fixture.root + "/answer.py", socket, answer, ready],
                log: fixture.root + "/answer.log")
            XCTAssertTrue(Shell.waitUntil(timeout: 30) { FileManager.default.fileExists(atPath: ready) })
            let status = fixture.folio("status '\(fixture.mountpoint)'")
            XCTAssertNotEqual(status.status, 0, "accepted \(answer): \(status.stdout)")
            XCTAssertTrue(status.stderr.contains("not a Folio control reply"), status.stderr)
            XCTAssertFalse(status.stdout.contains("remote:"), status.stdout)
        }
    }

    /// Under umask 022, every file Folio makes in the state folder is 0600 (or stricter) and every folder 0700;
    /// a state folder left open to others, and files in it, are made private again at the next mount, with a
    /// notice.
    func testStateFolderIsPrivateWhateverTheUmask() throws {
        let m = fixture.mountpoint
        Shell.check("""
            umask 022; echo one > '\(m)/one.txt' && mkdir '\(m)/folder' && echo two > '\(m)/folder/two.txt' \
              && setfattr -n user.xdg.tags -v secret '\(m)/one.txt' && cat '\(m)/one.txt' >/dev/null
            """)
        fixture.waitForUploads()
        let state = fixture.state
        XCTAssertEqual(Shell.check("find '\(state)' -type d ! -perm 700"), "", "folders others can enter")
        XCTAssertEqual(Shell.check("find '\(state)' ! -type d -perm /077"), "", "files others can read")
        XCTAssertNotEqual(Shell.check("find '\(state)' -name 'metadata.sqlite*'"), "")

        fixture.stop()
        Shell.check("chmod 755 '\(state)' && chmod 644 '\(state)/metadata.sqlite'")
        try fixture.start()
        Shell.check("echo three > '\(m)/three.txt'")
        fixture.waitForUploads()
        XCTAssertTrue(fixture.log.contains("made it private"), "no notice in the log")
        XCTAssertEqual(Shell.check("stat -c %a '\(state)'"), "700\n")
        XCTAssertEqual(Shell.check("find '\(state)' -type d ! -perm 700"), "")
        XCTAssertEqual(Shell.check("find '\(state)' ! -type d -perm /077"), "")
    }

    /// Another user on an `--allow-other` mount gets what the mode bits give: it reads a 0644 file and its
    /// tags, and cannot read a 0600 one nor write, tag or pin what is not its own.
    func testOtherUserFollowsTheModeBits() throws {
        let otherRun = try otherRuntime()
        let m = fixture.mountpoint
        Shell.check("""
            echo open > '\(m)/public.txt' && chmod 644 '\(m)/public.txt' && setfattr -n user.xdg.tags -v red \
              '\(m)/public.txt' && echo secret > '\(m)/private.txt' && chmod 600 '\(m)/private.txt'
            """)
        let read = try OtherUser.run("cat '\(m)/public.txt'", runtime: otherRun)
        XCTAssertEqual(read.stdout, "open\n", read.stderr)
        let tags = try OtherUser.run("getfattr --only-values -n user.xdg.tags '\(m)/public.txt'", runtime: otherRun)
        XCTAssertEqual(tags.stdout, "red", tags.stderr)
        let denied: [(String, String)] = [
            ("read a 0600 file", "cat '\(m)/private.txt'"),
            ("write a file of another user", "echo x >> '\(m)/public.txt'"),
            ("create in a folder of another user", "touch '\(m)/mine.txt'"),
            ("tag a file of another user", "setfattr -n user.xdg.tags -v blue '\(m)/public.txt'"),
            ("pin a file of another user", "setfattr -n user.folio.pinned -v 1 '\(m)/public.txt'"),
            ("read the tags of a 0600 file", "getfattr -n user.xdg.tags '\(m)/private.txt'"),
        ]
        for (what, command) in denied {
            let result = try OtherUser.run(command, runtime: otherRun)
            XCTAssertNotEqual(result.status, 0, "the other user could \(what)")
            XCTAssertTrue(result.stderr.contains("Permission denied"), "\(what): \(result.stderr)")
        }
        XCTAssertEqual(Shell.check("cat '\(m)/public.txt'"), "open\n")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.xdg.tags '\(m)/public.txt'"), "red")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("mine.txt")))
    }

    /// Another user's `folio` commands on a mount it can see say whose mount it is; and should the socket be
    /// reachable, the daemon checks who is asking (`SO_PEERCRED`) and refuses, while its owner is answered.
    func testOtherUsersCommandsAreRefused() throws {
        let otherRun = try otherRuntime()
        let m = fixture.mountpoint
        Shell.check("echo doc > '\(m)/doc.txt' && chmod 666 '\(m)/doc.txt'")
        let folio = MountFixture.executable
        for command in ["status '\(m)'", "status '\(m)/doc.txt'", "pin '\(m)/doc.txt'", "retry '\(m)'"] {
            let result = try OtherUser.run("'\(folio)' \(command)", runtime: otherRun)
            XCTAssertNotEqual(result.status, 0, command)
            XCTAssertTrue(result.stderr.contains("belongs to root (uid 0)"), "\(command): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("only its owner"), "\(command): \(result.stderr)")
        }

        // The socket opened to everyone by mistake: the daemon still refuses, and reads nothing of the request.
        let socket = socketPath
        Shell.check("chmod 711 '\(fixture.runtime)/folio' && chmod 666 '\(socket)'")
        let ask = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(30); s.connect(sys.argv[1])
            try: s.sendall(b'{"command":"pin","path":"doc.txt"}\\n')
            except BrokenPipeError: pass  # refused before the request was sent: the answer is still there
            print(s.makefile().readline().strip())
            """
        try ask.write(toFile: otherRun + "/ask.py", atomically: true, encoding: .utf8)
        chmod(otherRun + "/ask.py", 0o644)
        let answer = try OtherUser.run("/usr/bin/python3 '\(otherRun)/ask.py' '\(socket)'", runtime: otherRun)
        Shell.check("chmod 700 '\(fixture.runtime)/folio' && chmod 600 '\(socket)'")
        XCTAssertTrue(answer.stdout.contains("\"ok\":false"), answer.stdout + answer.stderr)
        XCTAssertTrue(answer.stdout.contains("only its owner"), answer.stdout + answer.stderr)
        XCTAssertFalse(answer.stdout.contains("\"pid\""), answer.stdout)
        XCTAssertEqual(fixture.status(fixture.path("doc.txt"))["ok"] as? Bool, true, "the owner is answered")
        let item = fixture.status(fixture.path("doc.txt"))["item"] as? [String: Any]
        XCTAssertEqual(item?["pinned"] as? Bool, false, "the other user's pin was done")
    }

    /// Hostile clients of the owner's own (garbage, a line without end, a thousand idle connections held open):
    /// the daemon keeps serving the mount and answers its owner meanwhile.
    func testHostileClientsDoNotStopTheDaemon() throws {
        Shell.check("echo kept > '\(fixture.path("kept.txt"))'")
        let script = """
            import socket, subprocess, sys, resource
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
            path, folio, mountpoint = sys.argv[1:4]
            def connect():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path); return s
            garbage = connect(); garbage.sendall(b'\\x00\\xff{{{ not json\\n')
            print('garbage:', garbage.makefile('rb').readline().decode().strip())
            endless = connect(); endless.settimeout(30); sent = 0
            try:
                while sent < 64 << 20:
                    endless.sendall(b'x' * (1 << 20)); sent += 1 << 20
            except OSError:
                pass
            idle = [connect() for _ in range(1000)]
            status = subprocess.run([folio, 'status', mountpoint], capture_output=True, text=True, timeout=60)
            print('status:', status.returncode, status.stderr.strip())
            print('read:', open(mountpoint + '/kept.txt').read().strip())
            with open(mountpoint + '/new.txt', 'w') as f: f.write('new')
            print('wrote')
            """
        let arguments = "'\(socketPath)' '\(MountFixture.executable)' '\(fixture.mountpoint)'"
        let run = Shell.run(
            "/usr/bin/python3 - \(arguments) <<'EOF'\n\(script)\nEOF", timeout: 120, environment: fixture.environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        let output = run.stdout
        XCTAssertTrue(output.contains("garbage: {\"") && output.contains("malformed request"), output)
        XCTAssertTrue(output.contains("status: 0 \n") || output.contains("status: 0\n"), output)
        XCTAssertTrue(output.contains("read: kept"), output)
        XCTAssertTrue(output.contains("wrote"), output)
        XCTAssertEqual(fixture.folio("status '\(fixture.mountpoint)'").status, 0, "answers after they are gone")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("new.txt"))'"), "new")
    }
}
