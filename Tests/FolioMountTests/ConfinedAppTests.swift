import FolioCore
import Foundation
import XCTest

/// An app confined to its view (the issue's "confined app"): bubblewrap (Debian's `bubblewrap`) runs a shell as
/// the app, with nothing of the machine but `/usr`, `/opt/swift` (for the `folio` CLI), its home, and its app view
/// mounted as the home's `Documents`. It can work on its own container and what was granted to it; every way
/// out is tried, and refused.
///
/// The sandbox runs as root with every capability dropped (`--cap-drop ALL`), in new namespaces for everything
/// but the network's loopback (`--unshare-all`); the mount belongs to root, like the tests' other mounts.
class ConfinedAppTests: MountTestCase {
    private var home: String { fixture.root + "/home" }
    private var documents: String { home + "/Documents" }
    private let app = "com.example.secret"

    override func prepareRemote() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap"), "needs bubblewrap")
        try fixture.addContainer(Container(id: ContainerID(app), displayName: "Secret", isPublic: false))
        try fixture.addContainer(Container(id: ContainerID("com.example.other"), displayName: "Other", isPublic: false))
        try FileManager.default.createDirectory(
            atPath: fixture.remotePath("Vault", container: app), withIntermediateDirectories: true)
        try Data("private".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Vault/key.txt", container: app)))
        try Data("other app".utf8).write(to: URL(fileURLWithPath: fixture.remotePath(
            "theirs.txt", container: "com.example.other")))
        try FileManager.default.createDirectory(atPath: fixture.remotePath("Docs"), withIntermediateDirectories: true)
        try Data("shared draft".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Docs/report.txt")))
        try Data("not granted".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Docs/other.txt")))
        // Symlinks that lead out of the view: absolute to the full mount, relative through `..`.
        try FileManager.default.createSymbolicLink(
            atPath: fixture.remotePath("Vault/absolute.txt", container: app),
            withDestinationPath: fixture.mountpoint + "/Docs/other.txt")
        try FileManager.default.createSymbolicLink(
            atPath: fixture.remotePath("Vault/relative.txt", container: app),
            withDestinationPath: "../../../mnt/Docs/other.txt")
        try FileManager.default.createDirectory(atPath: documents, withIntermediateDirectories: true)
        addTeardownBlock { [documents] in Shell.run("fusermount3 -u -z '\(documents)' 2>/dev/null; true") }
    }

    /// Runs `script` in the sandbox: `sh` as the app, with `$D` its Documents; returns its output.
    private func confined(_ script: String, environment: [String: String] = [:]) -> CommandResult {
        let sockets = fixture.runtime + "/folio"
        let socket = sockets + "/" + (Shell.run(
            "ls '\(sockets)'").stdout.split(separator: "\n").map(String.init)
            .first { $0.hasPrefix("Documents-") } ?? "missing.sock")
        let folio = MountFixture.executable
        var arguments = [
            "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--ro-bind", "/opt/swift", "/opt/swift",
            "--ro-bind", folio, folio, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            "--dir", home, "--bind", documents, documents,
            "--perms", "0700", "--dir", sockets, "--bind", socket, socket,
            "--clearenv", "--setenv", "HOME", home, "--setenv", "XDG_RUNTIME_DIR", fixture.runtime,
            "--setenv", "PATH", "/usr/bin", "--setenv", "D", documents, "--setenv", "FOLIO", folio,
            "--chdir", home,
        ]
        for (name, value) in environment { arguments += ["--setenv", name, value] }
        let scriptFile = fixture.root + "/confined-\(UUID().uuidString.prefix(8)).sh"
        XCTAssertNoThrow(try Data(script.utf8).write(to: URL(fileURLWithPath: scriptFile)))
        arguments += ["--ro-bind", scriptFile, "/app.sh", "/bin/sh", "/app.sh"]
        return Shell.run(arguments.map { "'\($0)'" }.joined(separator: " "), timeout: 60)
    }

    /// Mounts the app view as the app's Documents and grants it the Drive's `Docs/report.txt`.
    private func prepareApp() {
        let attached = fixture.folio("mount --app \(app) --of '\(fixture.mountpoint)' '\(documents)'")
        XCTAssertEqual(attached.status, 0, attached.stderr)
        XCTAssertEqual(fixture.folio("grant '\(fixture.path("Docs/report.txt"))' --app \(app)").status, 0)
    }

    /// Runs `script` as the app and checks that it ran to its end and that no line says `ESCAPE`.
    private func assertNoEscape(
        _ script: String, environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line
    ) {
        let result = confined(script + "\necho done\n", environment: environment)
        XCTAssertFalse(result.stdout.contains("ESCAPE"), result.stdout + result.stderr, file: file, line: line)
        XCTAssertTrue(
            result.stdout.hasSuffix("done\n"), "the whole script ran: " + result.stdout + result.stderr, file: file,
            line: line)
        XCTAssertEqual(Shell.check("cat '\(fixture.path("Docs/other.txt"))'"), "not granted", "untouched")
    }

    func testAConfinedAppWorksOnItsOwnAndGrantedDocuments() throws {
        prepareApp()
        let ownBookmark = fixture.folio("bookmark '\(documents)/Vault/key.txt'").stdout
        // Read, edit and save (atomically, as editors do) its own and granted documents; resolve its bookmark.
        let work = confined("""
            cat "$D/Vault/key.txt"; echo
            printf 'edited in the sandbox' > "$D/Vault/key.txt"
            python3 -c "import os; p='$D/report.txt'; open(p+'.tmp','w').write('saved by the app'); os.rename(p+'.tmp',p)"
            mkdir "$D/Drafts" && printf new > "$D/Drafts/n.txt"
            "$FOLIO" resolve "$OWN"
            "$FOLIO" tag add "$D/Vault/key.txt" secret > /dev/null && getfattr --only-values -n user.xdg.tags "$D/Vault/key.txt"
            """, environment: ["OWN": ownBookmark.trimmingCharacters(in: .whitespacesAndNewlines)])
        XCTAssertEqual(work.status, 0, work.stderr)
        XCTAssertEqual(work.stdout, "private\n\(documents)/Vault/key.txt\nsecret", work.stderr)
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("Vault/key.txt", container: app), "edited in the sandbox")
        XCTAssertEqual(fixture.remoteText("Docs/report.txt"), "saved by the app", "the granted document, in place")
        XCTAssertEqual(fixture.remoteText("Drafts/n.txt", container: app), "new")
        XCTAssertNil(fixture.remoteText("report.txt", container: app), "a grant is never a copy")
        XCTAssertEqual(fixture.folio("grants --json '\(fixture.path("Docs/other.txt"))'").stdout, "[\n\n]\n")
    }

    func testDotDotAndTheFullMountsPathLeadNowhere() throws {
        prepareApp()
        // (Outside the sandbox the same path does lead to the full mount: the control.)
        XCTAssertEqual(Shell.check("cat '\(documents)/../../mnt/Docs/other.txt'"), "not granted")
        assertNoEscape("""
            [ "$(ls -A "$D/..")" = Documents ] || echo "ESCAPE .. shows $(ls -A "$D/..")"
            cat "$D/../../mnt/Docs/other.txt" 2>/dev/null && echo "ESCAPE .. to the full mount"
            ls "\(fixture.mountpoint)" 2>/dev/null && echo "ESCAPE the full mount's path"
            cd "$D" && cd .. && cd .. && ls -A | grep -q mnt && echo "ESCAPE cd .. to the full mount"
            """)
    }

    func testProcLinksLeadNowhere() throws {
        prepareApp()
        assertNoEscape("""
            cd "$D/Vault" && ls -A /proc/self/cwd/../.. | grep -qv '^Documents$' && echo "ESCAPE /proc/self/cwd"
            for p in /proc/[0-9]*; do cat "$p/root\(fixture.mountpoint)/Docs/other.txt" 2>/dev/null \
              && echo "ESCAPE $p/root"; cat "$p/cwd/../Docs/other.txt" 2>/dev/null && echo "ESCAPE $p/cwd"; done
            cat /proc/self/root/../../../"\(fixture.mountpoint)"/Docs/other.txt 2>/dev/null && echo "ESCAPE /proc/self/root"
            """)
    }

    func testFindSeesNothingOutsideTheView() throws {
        prepareApp()
        XCTAssertTrue(Shell.check("find '\(fixture.root)' -name other.txt").contains("other.txt"), "the control")
        assertNoEscape("""
            found=$(find / -path /proc -prune -o \\( -name other.txt -o -name theirs.txt -o -name Docs \\) -print 2>/dev/null)
            [ -z "$found" ] || echo "ESCAPE find: $found"
            """)
    }

    func testSymlinksThatLeadOutLeadNowhere() throws {
        prepareApp()
        XCTAssertEqual(Shell.check("cat '\(documents)/Vault/absolute.txt'"), "not granted", "the control")
        assertNoEscape("""
            for link in absolute relative; do
              cat "$D/Vault/$link.txt" 2>/dev/null && echo "ESCAPE symlink $link"
            done
            ln -s "\(fixture.mountpoint)/Docs/other.txt" "$D/made.txt" && cat "$D/made.txt" 2>/dev/null \
              && echo "ESCAPE a symlink the app made"
            """)
    }

    func testOpenByHandleIsRefused() throws {
        prepareApp()
        let outsideIno = Shell.check("stat -c %i '\(fixture.path("Docs/other.txt"))'")
        let result = confined("""
            python3 - <<'EOF'
            import ctypes, os
            libc = ctypes.CDLL(None, use_errno=True)
            class Handle(ctypes.Structure):
                _fields_ = [("size", ctypes.c_uint), ("type", ctypes.c_int), ("bytes", ctypes.c_uint32 * 32)]
            handle, mount = Handle(), ctypes.c_int()
            handle.size = 128
            d = os.environ["D"]
            if libc.name_to_handle_at(-100, (d + "/Vault/key.txt").encode(), ctypes.byref(handle), ctypes.byref(mount), 0):
                print("name_to_handle_at:", os.strerror(ctypes.get_errno()))
            root = os.open(d, os.O_RDONLY)
            for ino in [None, int(os.environ["OUTSIDE"])]:
                if ino is not None:
                    handle.bytes[0], handle.bytes[1] = ino >> 32, ino & 0xffffffff
                fd = libc.open_by_handle_at(root, ctypes.byref(handle), os.O_RDONLY)
                if fd >= 0:
                    print("ESCAPE open_by_handle_at", ino, os.read(fd, 100))
                else:
                    print("open_by_handle_at:", os.strerror(ctypes.get_errno()))
            EOF
            """, environment: ["OUTSIDE": outsideIno.trimmingCharacters(in: .whitespacesAndNewlines)])
        XCTAssertEqual(
            result.stdout, String(repeating: "open_by_handle_at: Operation not permitted\n", count: 2),
            "refused without CAP_DAC_READ_SEARCH, its own document's handle and another's: " + result.stderr)
    }

    func testABookmarkOfADocumentOutsideTheViewIsRefused() throws {
        prepareApp()
        let foreign = fixture.folio("bookmark '\(fixture.path("Docs/other.txt"))'").stdout
        let granted = fixture.folio("bookmark '\(fixture.path("Docs/report.txt"))'").stdout
        let result = confined("""
            "$FOLIO" resolve "$FOREIGN" 2>&1 && echo "ESCAPE a bookmark of a document outside the view"
            "$FOLIO" resolve "$GRANTED"
            """, environment: [
                "FOREIGN": foreign.trimmingCharacters(in: .whitespacesAndNewlines),
                "GRANTED": granted.trimmingCharacters(in: .whitespacesAndNewlines),
            ])
        XCTAssertFalse(result.stdout.contains("ESCAPE"), result.stdout)
        XCTAssertTrue(result.stdout.contains("refused"), result.stdout)
        XCTAssertFalse(result.stdout.contains("other.txt"), "the refusal names nothing outside: " + result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix("\(documents)/report.txt\n"), "a granted one resolves: " + result.stdout)
    }

    func testTheSocketRefusesGrantsAndOtherViews() throws {
        prepareApp()
        assertNoEscape("""
            "$FOLIO" grant "$D/Vault/key.txt" --app com.example.other 2>/dev/null && echo "ESCAPE grant"
            "$FOLIO" mount --app com.example.other --of "$D" /tmp 2>/dev/null && echo "ESCAPE another app's view"
            "$FOLIO" import /etc/hostname --app \(app) --mount "$D" 2>/dev/null && echo "ESCAPE import"
            "$FOLIO" containers "$D" 2>/dev/null && echo "ESCAPE containers"
            "$FOLIO" recents --mount "$D" --app com.folio.drive 2>/dev/null && echo "ESCAPE another view's recents"
            """)
        XCTAssertEqual(fixture.folio("grants --json '\(documents)/Vault/key.txt'").status, 1, "refused there too")
        XCTAssertEqual(Shell.check("ls '\(fixture.root)' | grep -c view || true"), "0\n")
    }

    /// Even a process that may open by handle (root with every capability, outside any sandbox) gets nothing of
    /// the full view through an app view's mount: the mount has no export support, so a handle of an inode the
    /// view never showed is stale.
    func testAHandleOfAnItemOutsideTheViewIsStaleEvenForRoot() throws {
        let attached = fixture.folio("mount --app \(app) --of '\(fixture.mountpoint)' '\(documents)'")
        XCTAssertEqual(attached.status, 0, attached.stderr)
        let outside = Shell.check("stat -c %i '\(fixture.path("Docs/other.txt"))'")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let result = Shell.run("""
            D='\(documents)' OUTSIDE=\(outside) python3 - <<'EOF'
            import ctypes, os
            libc = ctypes.CDLL(None, use_errno=True)
            class Handle(ctypes.Structure):
                _fields_ = [("size", ctypes.c_uint), ("type", ctypes.c_int), ("bytes", ctypes.c_uint32 * 32)]
            handle, mount = Handle(), ctypes.c_int()
            handle.size = 128
            d = os.environ["D"]
            assert libc.name_to_handle_at(-100, (d + "/Vault/key.txt").encode(), ctypes.byref(handle), ctypes.byref(mount), 0) == 0
            ino = int(os.environ["OUTSIDE"])
            handle.bytes[0], handle.bytes[1] = ino >> 32, ino & 0xffffffff
            fd = libc.open_by_handle_at(os.open(d, os.O_RDONLY), ctypes.byref(handle), os.O_RDONLY)
            print(("opened " + repr(os.read(fd, 100))) if fd >= 0 else os.strerror(ctypes.get_errno()))
            EOF
            """)
        XCTAssertEqual(result.stdout, "Stale file handle\n", result.stderr)
    }
}
