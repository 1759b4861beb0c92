import FolioCore
import Foundation
import XCTest

/// Bookmarks on real mounts (DESIGN.md §2 "References, bookmarks, grants"): `folio bookmark` and `folio resolve`
/// through the control socket, signed tokens, and the views they may resolve in.
class BookmarkTests: MountTestCase {
    private var secretView: String { fixture.root + "/secret" }
    private var notesView: String { fixture.root + "/notes" }

    override func prepareRemote() throws {
        try fixture.addContainer(Container(id: ContainerID("com.example.secret"), displayName: "Secret", isPublic: false))
        try fixture.addContainer(Container(id: ContainerID("com.example.notes"), displayName: "Notes", isPublic: true))
        try FileManager.default.createDirectory(
            atPath: fixture.remotePath("Vault", container: "com.example.secret"), withIntermediateDirectories: true)
        try Data("private".utf8).write(to: URL(fileURLWithPath: fixture.remotePath(
            "Vault/key.txt", container: "com.example.secret")))
        try FileManager.default.createDirectory(atPath: fixture.remotePath("Docs"), withIntermediateDirectories: true)
        try Data("shared draft".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Docs/report.txt")))
        fixture.handRemoteToServer()
        for view in [secretView, notesView] {
            try FileManager.default.createDirectory(atPath: view, withIntermediateDirectories: true)
            addTeardownBlock { Shell.run("fusermount3 -u -z '\(view)' 2>/dev/null; true") }
        }
    }

    private func bookmark(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let result = fixture.folio("bookmark '\(path)'")
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `folio resolve --json` through the mount at `mount`: the answer, or `nil` with the error in `error`.
    private func resolve(_ token: String, through mount: String? = nil) -> (answer: [String: Any]?, error: String) {
        let result = fixture.folio("resolve --json \(mount.map { "--mount '\($0)' " } ?? "")'\(token)'")
        guard result.status == 0, let data = result.stdout.data(using: .utf8),
              let answer = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return (nil, result.stderr + result.stdout)
        }
        return (answer, result.stderr)
    }

    private func resolvedPath(_ token: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        let (answer, error) = resolve(token, through: fixture.mountpoint)
        XCTAssertNotNil(answer, error, file: file, line: line)
        XCTAssertEqual(answer?["stale"] as? Bool, false, file: file, line: line)
        return answer?["path"] as? String
    }

    func testABookmarkFollowsRenamesMovesEvictionSavesAndRestarts() throws {
        let original = fixture.path("Docs/report.txt")
        let token = bookmark(original)
        XCTAssertTrue(token.hasPrefix("fb1."), token)
        XCTAssertEqual(resolvedPath(token), original)
        let id = Shell.check("getfattr --only-values -n user.folio.id '\(original)'")

        Shell.check("mkdir '\(fixture.path("Archive"))' && mv '\(original)' '\(fixture.path("Archive/final.txt"))'")
        XCTAssertEqual(resolvedPath(token), fixture.path("Archive/final.txt"), "after a rename and a move")

        // An editor's atomic save (a temporary file renamed over the document) keeps the item: not stale.
        Shell.check("""
            python3 -c "import os; p='\(fixture.path("Archive/final.txt"))'; open(p+'.tmp','w').write('saved'); \
            os.rename(p+'.tmp', p)"
            """)
        XCTAssertEqual(resolvedPath(token), fixture.path("Archive/final.txt"), "after an atomic save")
        fixture.waitForUploads()
        XCTAssertEqual(fixture.folio("evict '\(fixture.path("Archive/final.txt"))'").status, 0)
        XCTAssertEqual(
            Shell.check("getfattr --only-values -n user.folio.state '\(fixture.path("Archive/final.txt"))'"),
            "placeholder")
        XCTAssertEqual(resolvedPath(token), fixture.path("Archive/final.txt"), "evicted")

        fixture.stop()
        try fixture.start()
        XCTAssertEqual(resolvedPath(token), fixture.path("Archive/final.txt"), "after a restart")
        // A rename is durable once its folder is synced (POSIX: fsync of the directory), as on a disk's filesystem.
        Shell.check("mv '\(fixture.path("Archive/final.txt"))' '\(fixture.path("Docs/back.txt"))'")
        Shell.check("python3 -c \"import os; os.fsync(os.open('\(fixture.path("Docs"))', os.O_RDONLY))\"")
        fixture.kill9()
        try fixture.start()
        let (answer, error) = resolve(token, through: fixture.mountpoint)
        XCTAssertEqual(answer?["path"] as? String, fixture.path("Docs/back.txt"), "after kill -9: \(error)")
        XCTAssertEqual(answer?["id"] as? String, id)
        XCTAssertEqual(answer?["bookmark"] as? String, token, "not stale: the same token to keep")

        // Without --mount, from a folder outside every mount: the CLI finds the mount that resolves it.
        let plain = Shell.run(
            "cd / && '\(MountFixture.executable)' resolve '\(token)'", environment: fixture.environment)
        XCTAssertEqual(plain.stdout, fixture.path("Docs/back.txt") + "\n", plain.stderr)
    }

    func testABookmarkOfAReplacedDocumentIsStaleAndOfADeletedOneIsAnError() throws {
        try skipOverWebDAV("replaces a file in the remote folder by hand")
        let document = fixture.path("Docs/report.txt")
        let token = bookmark(document)
        let oldID = Shell.check("getfattr --only-values -n user.folio.id '\(document)'")
        // Another device deletes the document, and later makes a new one under its name: another item. (A save
        // that writes over the document, there or here, keeps the item and its bookmarks.)
        let remote = fixture.remotePath("Docs/report.txt")
        Shell.check("rm '\(remote)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { !FileManager.default.fileExists(atPath: document) })
        Shell.check("printf 'replaced' > '\(remote)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            let id = Shell.run("getfattr --only-values -n user.folio.id '\(document)'").stdout
            return !id.isEmpty && id != oldID
        }, "the replacement reached the mount")

        let (answer, error) = resolve(token, through: fixture.mountpoint)
        XCTAssertEqual(answer?["stale"] as? Bool, true, error)
        XCTAssertEqual(answer?["path"] as? String, document)
        let fresh = try XCTUnwrap(answer?["bookmark"] as? String)
        XCTAssertNotEqual(fresh, token)
        XCTAssertEqual(resolvedPath(fresh), document, "the fresh token is not stale")
        let text = fixture.folio("resolve --mount '\(fixture.mountpoint)' '\(token)'")
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stderr.contains("stale") && text.stderr.contains(fresh), text.stderr)

        Shell.check("rm '\(document)'")
        let deleted = fixture.folio("resolve --mount '\(fixture.mountpoint)' '\(fresh)'")
        XCTAssertNotEqual(deleted.status, 0)
        XCTAssertTrue(deleted.stderr.contains("was deleted"), deleted.stderr)
        XCTAssertTrue(deleted.stdout.isEmpty)
    }

    /// The README's example program: bookmarks through the control socket, without the CLI.
    func testTheExampleProgramBookmarksAndResolvesThroughTheControlSocket() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/examples/folio_bookmarks.py").path
        let folder = (MountFixture.executable as NSString).deletingLastPathComponent
        var environment = fixture.environment
        environment["PATH"] = folder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin")
        let made = Shell.run(
            "python3 '\(example)' '\(fixture.mountpoint)' bookmark Docs/report.txt", environment: environment)
        XCTAssertEqual(made.status, 0, made.stderr)
        let token = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(token.hasPrefix("fb1."), made.stdout)
        Shell.check("mv '\(fixture.path("Docs/report.txt"))' '\(fixture.path("Docs/moved.txt"))'")
        let resolved = Shell.run(
            "python3 '\(example)' '\(fixture.mountpoint)' resolve '\(token)'", environment: environment)
        XCTAssertEqual(resolved.stdout, fixture.path("Docs/moved.txt") + "\n", resolved.stderr)
        let refused = Shell.run(
            "python3 '\(example)' '\(fixture.mountpoint)' resolve 'fb1.x.y'", environment: environment)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("not a Folio bookmark"), refused.stderr)
    }

    /// A key file that is not what Folio made (cut short, or a symlink someone put there) stops the mount with what
    /// to do, and is neither used nor replaced: bookmarks made with the real key must not start failing silently.
    func testABrokenBookmarkKeyStopsTheMountWithWhatToDo() throws {
        try skipOverWebDAV("about the state folder, not the remote")
        let token = bookmark(fixture.path("Docs/report.txt"))
        fixture.stop()
        let key = fixture.state + "/bookmark.key"
        let saved = try Data(contentsOf: URL(fileURLWithPath: key))
        for broken in ["head -c 5 /dev/urandom > '\(key)'", "ln -sf /etc/hostname '\(key)'"] {
            Shell.check(broken)
            let before = Shell.check("ls -l '\(key)'")
            let result = fixture.folio(
                "mount --remote '\(fixture.remote)' --state '\(fixture.state)' '\(fixture.mountpoint)'")
            XCTAssertNotEqual(result.status, 0, broken)
            XCTAssertTrue(result.stderr.contains("bookmark key"), broken + ": " + result.stderr)
            XCTAssertEqual(Shell.check("ls -l '\(key)'"), before, "left as it was")
            Shell.check("rm -f '\(key)'")
        }
        try saved.write(to: URL(fileURLWithPath: key))
        XCTAssertEqual(chmod(key, 0o600), 0)
        try fixture.start()
        XCTAssertEqual(resolvedPath(token), fixture.path("Docs/report.txt"), "the real key back: the token resolves")
    }

    func testForgedChangedAndForeignBookmarksAreRefused() throws {
        let token = bookmark(fixture.path("Docs/report.txt"))
        var info = stat()
        XCTAssertEqual(lstat(fixture.state + "/bookmark.key", &info), 0)
        XCTAssertEqual(info.st_mode & 0o7777, 0o600, "the key is private")
        XCTAssertEqual(info.st_size, 32)

        // One byte changed, in the content (another item's id) or in the signature.
        let parts = token.split(separator: ".").map(String.init)
        XCTAssertEqual(parts.count, 3)
        var content = try XCTUnwrap(Data(base64Encoded: Self.padded(parts[1])))
        let json = String(decoding: content, as: UTF8.self)
        content = Data(json.replacingOccurrences(of: "report.txt", with: "rEport.txt").utf8)
        let changedContent = [parts[0], Self.base64url(content), parts[2]].joined(separator: ".")
        var signature = try XCTUnwrap(Data(base64Encoded: Self.padded(parts[2])))
        signature[0] ^= 1
        let changedSignature = [parts[0], parts[1], Self.base64url(signature)].joined(separator: ".")
        for forged in [changedContent, changedSignature] {
            let (answer, error) = resolve(forged, through: fixture.mountpoint)
            XCTAssertNil(answer)
            XCTAssertTrue(error.contains("signature does not match"), error)
        }
        for garbage in ["hello", "fb1.x.y", "fb1..", String(token.dropLast(4))] {
            let (answer, error) = resolve(garbage, through: fixture.mountpoint)
            XCTAssertNil(answer, garbage)
            XCTAssertTrue(error.contains("not a Folio bookmark") || error.contains("does not match"), error)
        }

        // A second installation (its own state and key) over its own remote.
        let other = try MountFixture()
        defer { other.tearDown() }
        try FileManager.default.createDirectory(atPath: other.remote + "/Docs", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: other.remote + "/Docs/report.txt"))
        try other.start()
        let foreign = other.folio("bookmark '\(other.path("Docs/report.txt"))'").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(foreign.hasPrefix("fb1."))
        let (answer, error) = resolve(foreign, through: fixture.mountpoint)
        XCTAssertNil(answer)
        XCTAssertTrue(error.contains("another Folio installation"), error)
        XCTAssertEqual(Shell.check("cat '\(fixture.path("Docs/report.txt"))'"), "shared draft", "nothing changed")
    }

    func testAnAppViewResolvesOnlyWhatItMayOpenAndItsSocketRefusesTheUsersCommands() throws {
        for (app, view) in [("com.example.secret", secretView), ("com.example.notes", notesView)] {
            let attached = fixture.folio("mount --app \(app) --of '\(fixture.mountpoint)' '\(view)'")
            XCTAssertEqual(attached.status, 0, attached.stderr)
        }
        let document = fixture.path("Docs/report.txt")
        XCTAssertEqual(fixture.folio("grant '\(document)' --app com.example.secret --as granted.txt").status, 0)

        // Made in the secret app's view: of its own private document, and of the granted one.
        let own = bookmark(secretView + "/Vault/key.txt")
        let granted = bookmark(secretView + "/granted.txt")
        XCTAssertEqual(resolve(own, through: secretView).answer?["path"] as? String, secretView + "/Vault/key.txt")
        XCTAssertEqual(resolve(granted, through: secretView).answer?["path"] as? String, secretView + "/granted.txt")

        // Another app's view, and the full view, cannot open the private document: refused, and nothing leaks.
        for mount in [notesView, fixture.mountpoint] {
            let (answer, error) = resolve(own, through: mount)
            XCTAssertNil(answer, mount)
            XCTAssertTrue(error.contains("refused") && !error.contains("Vault"), error)
        }
        // The granted document: refused in the notes view until the notes app holds a grant of it.
        XCTAssertNil(resolve(granted, through: notesView).answer)
        XCTAssertEqual(fixture.folio("grant '\(document)' --app com.example.notes --as mine.txt").status, 0)
        XCTAssertEqual(resolve(granted, through: notesView).answer?["path"] as? String, notesView + "/mine.txt")
        XCTAssertEqual(
            resolve(granted, through: fixture.mountpoint).answer?["path"] as? String, document,
            "the full view opens the document at its own place")

        // `folio grants` lists both, `folio revoke` takes the notes grant back.
        let grants = fixture.folio("grants --json '\(document)'")
        let listed = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(grants.stdout.utf8)) as? [[String: Any]], grants.stderr)
        XCTAssertEqual(listed.map { $0["app"] as? String }, ["com.example.notes", "com.example.secret"])
        XCTAssertEqual(listed.map { $0["path"] as? String }, ["mine.txt", "granted.txt"])
        XCTAssertEqual(listed.first?["documentPath"] as? String, "Docs/report.txt")
        let revoked = fixture.folio("revoke '\(document)' --app com.example.notes")
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: notesView + "/mine.txt"), "the reference is gone")
        XCTAssertNil(resolve(granted, through: notesView).answer, "no grant, no resolution")
        XCTAssertEqual(Shell.check("cat '\(document)'"), "shared draft", "the document stays")
        let again = fixture.folio("revoke '\(document)' --app com.example.notes")
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("holds no grant"), again.stderr)
        XCTAssertEqual(fixture.folio("grants '\(fixture.mountpoint)'").stdout.split(separator: "\n").count, 1)

        // What only the user may do is refused on an app view's socket (which a confined app can reach).
        for command in [
            "grant '\(secretView)/Vault/key.txt' --app com.example.notes",
            "revoke '\(secretView)/granted.txt' --app com.example.secret",
            "grants '\(secretView)'",
            "mount --app com.example.notes --of '\(secretView)' '\(fixture.root)/run'",
        ] {
            let refused = fixture.folio(command)
            XCTAssertNotEqual(refused.status, 0, command)
            XCTAssertTrue(refused.stderr.contains("not available through the app view"), command + ": " + refused.stderr)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: secretView + "/granted.txt"), "nothing was revoked")
    }

    private static func padded(_ base64url: String) -> String {
        var text = base64url.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return text
    }

    private static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
