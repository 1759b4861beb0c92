import FolioCore
import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// Several views over one state, and one item at several paths, on real mounts: an app view of a private
/// container mounted from the running daemon, and a document granted to the app opened in place.
class ViewTests: MountTestCase {
    private var appMountpoint: String { fixture.root + "/app" }

    override func prepareRemote() throws {
        let secret = Container(id: ContainerID("com.example.secret"), displayName: "Secret", isPublic: false)
        try fixture.addContainer(secret)
        try FileManager.default.createDirectory(
            atPath: fixture.remotePath("Vault", container: "com.example.secret"), withIntermediateDirectories: true)
        try Data("private".utf8).write(to: URL(fileURLWithPath: fixture.remotePath(
            "Vault/key.txt", container: "com.example.secret")))
        try FileManager.default.createDirectory(atPath: fixture.remotePath("Docs"), withIntermediateDirectories: true)
        try Data("shared draft".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Docs/report.txt")))
        try FileManager.default.createDirectory(atPath: appMountpoint, withIntermediateDirectories: true)
        addTeardownBlock { [appMountpoint] in
            Shell.run("fusermount3 -u -z '\(appMountpoint)' 2>/dev/null; true")
        }
    }

    private func attachAppView(file: StaticString = #filePath, line: UInt = #line) {
        let result = fixture.folio(
            "mount --app com.example.secret --of '\(fixture.mountpoint)' '\(appMountpoint)'")
        XCTAssertEqual(result.status, 0, result.stderr + result.stdout, file: file, line: line)
    }

    func testRemoteChangesFireInotifyEventsInTheAppView() throws {
        attachAppView()
        let watcher = try InotifyWatcher(tree: appMountpoint, directory: fixture.root)
        addTeardownBlock { watcher.stop() }
        let vault = fixture.remotePath("Vault", container: "com.example.secret")
        Shell.check("printf 'second' > '\(vault)/second.txt'")
        watcher.expect("CREATE Vault/second.txt", "a remote create, seen in the app view")
        Shell.check("mv '\(vault)/second.txt' '\(vault)/renamed.txt'")
        // A scan of the remote that races with the rename can miss the file under both names (README
        // "Limitations"): the watcher then sees a delete and a create, which is still the change.
        watcher.expect("a remote rename, seen in the app view") {
            $0 == "MOVED_TO Vault/renamed.txt" || $0 == "CREATE Vault/renamed.txt"
        }
        Shell.check("rm '\(vault)/renamed.txt'")
        watcher.expect("DELETE Vault/renamed.txt", "a remote delete, seen in the app view")
        XCTAssertEqual(fixture.pendingUploads, 0)
    }

    func testAppViewOfAPrivateContainerSharesTheState() throws {
        XCTAssertFalse(Shell.check("ls -a '\(fixture.mountpoint)'").contains("Secret"), "private: not in the full view")
        attachAppView()
        XCTAssertEqual(Shell.check("ls '\(appMountpoint)'"), "Vault\n", "the app view's root is the container")
        XCTAssertEqual(Shell.check("cat '\(appMountpoint)/Vault/key.txt'"), "private")
        XCTAssertEqual(
            Shell.check("getfattr --only-values -n user.folio.container '\(appMountpoint)/Vault/key.txt'"),
            "com.example.secret")
        XCTAssertNotEqual(Shell.run("ls '\(appMountpoint)/Docs'").status, 0, "nothing outside the container")

        // One state: a change through the app view is one commit, uploaded by the one daemon.
        Shell.check("printf 'rotated' > '\(appMountpoint)/Vault/key.txt'")
        Shell.check("mkdir '\(appMountpoint)/Inbox' && printf new > '\(appMountpoint)/Inbox/n.txt'")
        fixture.waitForUploads()
        XCTAssertEqual(
            try String(
                contentsOfFile: fixture.remotePath("Vault/key.txt", container: "com.example.secret"), encoding: .utf8),
            "rotated")
        XCTAssertEqual(
            try String(
                contentsOfFile: fixture.remotePath("Inbox/n.txt", container: "com.example.secret"), encoding: .utf8),
            "new")
        let status = fixture.folio("status --json '\(appMountpoint)/Vault/key.txt'")
        XCTAssertTrue(status.stdout.contains("app view of com.example.secret"), status.stdout)
        XCTAssertTrue(status.stdout.contains("\"state\" : \"materialized\""), status.stdout)

        // Refused: a second mount at the same place, an id that cannot name a container (a container the remote
        // does not have is made: ContainerTests).
        XCTAssertNotEqual(fixture.folio(
            "mount --app com.example.secret --of '\(fixture.mountpoint)' '\(appMountpoint)'").status, 0)
        let unknown = fixture.folio("mount --app nope --of '\(fixture.mountpoint)' '\(fixture.root)/run'")
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.contains("\"nope\" is not a container id"), unknown.stderr)

        // The view can be unmounted alone; the daemon's own mount stays.
        XCTAssertEqual(fixture.folio("unmount '\(appMountpoint)'").status, 0)
        XCTAssertTrue(Shell.waitUntil(timeout: 10) { !self.isMounted(self.appMountpoint) })
        XCTAssertEqual(Shell.check("cat '\(fixture.mountpoint)/Docs/report.txt'"), "shared draft")
    }

    func testGrantedDocumentOpensInPlaceInTheAppView() throws {
        attachAppView()
        let original = fixture.path("Docs/report.txt")
        let granted = fixture.folio("grant '\(original)' --app com.example.secret --as report.txt")
        XCTAssertEqual(granted.status, 0, granted.stderr)
        let reference = appMountpoint + "/report.txt"
        XCTAssertTrue(Shell.waitUntil(timeout: 5) { FileManager.default.fileExists(atPath: reference) })
        XCTAssertEqual(Shell.check("stat -c %i '\(reference)'"), Shell.check("stat -c %i '\(original)'"), "same inode")
        XCTAssertEqual(Shell.check("stat -c %h '\(original)'"), "2\n")

        // Edits through the reference change the original: one item, one commit, uploaded once.
        Shell.check("printf 'edited by the app' > '\(reference)'")
        XCTAssertEqual(Shell.check("cat '\(original)'"), "edited by the app")
        fixture.waitForUploads()
        XCTAssertEqual(
            try String(contentsOfFile: fixture.remotePath("Docs/report.txt"), encoding: .utf8), "edited by the app")
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: fixture.remotePath("report.txt", container: "com.example.secret")),
            "a reference is never uploaded as a copy")

        // The reference follows the original through a rename; removing the reference keeps the document.
        Shell.check("mv '\(original)' '\(fixture.path("Docs/final.txt"))'")
        XCTAssertEqual(Shell.check("cat '\(reference)'"), "edited by the app")
        Shell.check("rm '\(reference)'")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("Docs/final.txt"))'"), "edited by the app")

        // Bad grants: a folder, a path that does not exist.
        XCTAssertNotEqual(fixture.folio("grant '\(fixture.path("Docs"))' --app com.example.secret").status, 0)
        let missing = fixture.folio("grant '\(fixture.path("Docs/nope.txt"))' --app com.example.secret")
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertFalse(missing.stderr.isEmpty)
    }

    func testChangesThroughOneViewAreSeenAtOnceThroughTheOther() throws {
        let other = appMountpoint
        let result = fixture.folio("mount --app com.folio.drive --of '\(fixture.mountpoint)' '\(other)'")
        XCTAssertEqual(result.status, 0, result.stderr)
        // Both kernels cache the document's entry and attributes first.
        XCTAssertEqual(Shell.check("stat -c %a '\(other)/Docs/report.txt'"), "644\n")
        XCTAssertEqual(Shell.check("cat '\(other)/Docs/report.txt'"), "shared draft")
        XCTAssertEqual(Shell.check("ls '\(other)/Docs'"), "report.txt\n")

        Shell.check("chmod 600 '\(fixture.path("Docs/report.txt"))'")
        XCTAssertEqual(Shell.check("stat -c %a '\(other)/Docs/report.txt'"), "600\n", "attributes")
        Shell.check("mv '\(fixture.path("Docs/report.txt"))' '\(fixture.path("Docs/final.txt"))'")
        XCTAssertFalse(FileManager.default.fileExists(atPath: other + "/Docs/report.txt"), "the old name is gone")
        XCTAssertEqual(Shell.check("ls '\(other)/Docs'"), "final.txt\n", "the listing")
        Shell.check("printf new > '\(other)/Docs/new.txt'")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("Docs/new.txt"))'"), "new", "and the other way round")
        Shell.check("rm '\(fixture.path("Docs/final.txt"))'")
        XCTAssertNotEqual(Shell.run("cat '\(other)/Docs/final.txt'").status, 0, "a removed document")
    }

    /// "At once" raced many rounds: each round both kernels cache the names first, then one shell renames through
    /// one view and looks through the other in the next instant, both ways. An invalidation still queued for the
    /// other view when the rename returns shows as a name that is gone, or one missing.
    func testARenameThroughOneViewIsNeverStaleInTheOtherManyRounds() throws {
        let other = appMountpoint
        let result = fixture.folio("mount --app com.folio.drive --of '\(fixture.mountpoint)' '\(other)'")
        XCTAssertEqual(result.status, 0, result.stderr)
        let main = fixture.path("Docs")
        let script = """
            for round in $(seq 1 100); do
              stat '\(other)/Docs/report.txt' '\(main)/report.txt' > /dev/null
              mv '\(main)/report.txt' '\(main)/moved.txt'
              [ -e '\(other)/Docs/report.txt' ] && echo "round $round: the old name is still there"
              [ -e '\(other)/Docs/moved.txt' ] || echo "round $round: the new name is missing"
              mv '\(other)/Docs/moved.txt' '\(other)/Docs/report.txt'
              [ -e '\(main)/moved.txt' ] && echo "round $round: the other way, the old name is still there"
              [ -e '\(main)/report.txt' ] || echo "round $round: the other way, the new name is missing"
            done
            """
        XCTAssertEqual(Shell.check(script), "", "100 rounds each way")
        XCTAssertEqual(Shell.check("cat '\(main)/report.txt'"), "shared draft")
    }

    func testVirtualFoldersShowTaggedAndRecentDocumentsInPlace() throws {
        let original = fixture.path("Docs/report.txt")
        XCTAssertEqual(Shell.check("ls '\(fixture.mountpoint)'"), "Docs\n", "virtual folders are hidden from ls")
        XCTAssertTrue(Shell.check("ls -a '\(fixture.mountpoint)'").contains(".Tags"))
        Shell.check("setfattr -n user.xdg.tags -v 'red,draft' '\(original)'")
        XCTAssertEqual(Shell.check("ls '\(fixture.path(".Tags"))'"), "draft\nred\n")
        let tagged = fixture.path(".Tags/red/report.txt")
        XCTAssertEqual(Shell.check("stat -c %i '\(tagged)'"), Shell.check("stat -c %i '\(original)'"), "same inode")
        XCTAssertEqual(Shell.check("cat '\(tagged)'"), "shared draft")
        XCTAssertEqual(Shell.check("ls '\(fixture.path(".Recents"))'"), "report.txt\n", "just opened")

        // Listings are computed afresh: a tag taken away is gone at once, although the kernel saw the name.
        Shell.check("setfattr -n user.xdg.tags -v 'draft' '\(original)'")
        XCTAssertEqual(Shell.check("ls '\(fixture.path(".Tags"))'"), "draft\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: tagged))

        let refused = Shell.run("touch '\(fixture.path(".Tags/draft/new.txt"))'")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("Read-only file system"), refused.stderr)
        XCTAssertNotEqual(Shell.run("rm '\(fixture.path(".Tags/draft/report.txt"))'").status, 0)
        XCTAssertEqual(Shell.check("cat '\(original)'"), "shared draft", "nothing changed")
        fixture.waitForUploads()
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.remotePath(".Tags")), "never uploaded")
    }

    private func isMounted(_ path: String) -> Bool {
        let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first == Substring(path) }
    }
}
