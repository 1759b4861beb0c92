import FolioTestServers
import Foundation
import XCTest

/// Issue 15: Folio mounted over a real WebDAV server (a private Apache): shell tools through the mount reach the
/// server; two mounts ("devices", separate state folders) of one server see each other's changes; simultaneous
/// edits end as a conflict with both versions kept; an edit made on the server itself reaches the mount.
final class WebDAVMountTests: WebDAVMountTestCase {
    func testShellToolsThroughTheMountReachTheServer() throws {
        let device = try mount()
        Shell.check("echo hello > '\(device.path("a.txt"))'")
        Shell.check("mkdir '\(device.path("dir"))' && echo bee > '\(device.path("dir/b.txt"))'")
        Shell.check("mkdir -p '\(device.path("dir/sub"))' && echo deep > '\(device.path("dir/sub/c.txt"))'")
        XCTAssertEqual(Shell.check("cat '\(device.path("a.txt"))'"), "hello\n")
        Shell.check("mv '\(device.path("a.txt"))' '\(device.path("dir/moved.txt"))'")
        Shell.check("rm '\(device.path("dir/b.txt"))'")
        XCTAssertEqual(Shell.check("ls '\(device.path("dir"))'"), "moved.txt\nsub\n")
        XCTAssertEqual(Shell.check("ls '\(device.mountpoint)'"), "dir\n")
        device.waitForUploads()

        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) {
                self.serverNames("") == ["dir"] && self.serverNames("dir") == ["moved.txt", "sub"]
                    && self.serverText("dir/moved.txt") == "hello\n" && self.serverText("dir/sub/c.txt") == "deep\n"
            },
            "on the server: \(serverNames("")) \(serverNames("dir")); status: \(device.status())")
        let reply = try server.request("GET", Self.collection + "com.folio.drive/dir/moved.txt")
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.text, "hello\n", "served over HTTP as written")
        XCTAssertEqual(try server.request("GET", Self.collection + "com.folio.drive/dir/b.txt").status, 404)
        // Apache keeps properties and honours conditions: `folio status` names no limitation (as it does over
        // rclone: WebDAVServerLimitsMountTests).
        let status = device.folio("status '\(device.mountpoint)'").stdout
        XCTAssertTrue(status.contains("provider: online"), status)
        XCTAssertFalse(status.contains("LIMITED"), status)
    }

    func testTwoMountsOfOneServerSeeEachOthersChanges() throws {
        let here = try mount()
        let there = try mount()
        // Create.
        Shell.check("mkdir '\(here.path("shared"))' && echo one > '\(here.path("shared/doc.txt"))'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { self.text(there, "shared/doc.txt") == "one\n" },
            "created on one device: \(String(describing: names(there, "shared")))")
        // Edit.
        Shell.check("echo two > '\(here.path("shared/doc.txt"))'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { self.text(there, "shared/doc.txt") == "two\n" },
            "edited: \(String(describing: text(there, "shared/doc.txt")))")
        // Rename.
        Shell.check("mv '\(here.path("shared/doc.txt"))' '\(here.path("shared/renamed.txt"))'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) {
                self.names(there, "shared") == ["renamed.txt"] && self.text(there, "shared/renamed.txt") == "two\n"
            },
            "renamed: \(String(describing: names(there, "shared")))")
        // Move to another folder.
        Shell.check("mkdir '\(here.path("archive"))'")
        Shell.check("mv '\(here.path("shared/renamed.txt"))' '\(here.path("archive/"))'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) {
                self.names(there, "shared") == [] && self.text(there, "archive/renamed.txt") == "two\n"
            },
            "moved: \(String(describing: names(there, "shared"))) \(String(describing: names(there, "archive")))")
        // Delete.
        Shell.check("rm '\(here.path("archive/renamed.txt"))'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { self.names(there, "archive") == [] },
            "deleted: \(String(describing: names(there, "archive")))")
        // And the other way.
        Shell.check("echo back > '\(there.path("shared/from-there.txt"))'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { self.text(here, "shared/from-there.txt") == "back\n" },
            "created on the other device: \(String(describing: names(here, "shared")))")
        XCTAssertEqual(serverText("shared/from-there.txt"), "back\n")
        XCTAssertEqual(serverNames("archive"), [])
    }

    func testSimultaneousEditsEndAsAConflictWithBothVersionsKeptAndConvergeAfterResolve() throws {
        // This device waits 3 s before it uploads, so the other device's edit reaches the server first.
        let here = try mount(["--upload-delay", "3"])
        let there = try mount()
        Shell.check("mkdir '\(here.path("docs"))' && echo original > '\(here.path("docs/doc.txt"))'")
        here.waitForUploads()
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.text(there, "docs/doc.txt") == "original\n" })

        Shell.check("echo 'edited here' > '\(here.path("docs/doc.txt"))'")
        Shell.check("echo 'edited there' > '\(there.path("docs/doc.txt"))'")
        let state = { Shell.run("getfattr --only-values -n user.folio.state '\(here.path("docs/doc.txt"))'").stdout }
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { state() == "conflicted" }, "state: \(state())")
        XCTAssertEqual(Shell.check("cat '\(here.path("docs/doc.txt"))'"), "edited here\n", "the local version stays")
        var listing = ""
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            listing = here.folio("versions '\(here.path("docs/doc.txt"))'").stdout
            return listing.split(separator: "\n").count == 2
        }, listing)
        let lines = listing.split(separator: "\n")
        let remoteVersion = lines.count > 1 ? String(lines[1].split(separator: "\t").first ?? "") : "missing"
        XCTAssertEqual(
            here.folio("versions show '\(here.path("docs/doc.txt"))' '\(remoteVersion)'").stdout, "edited there\n",
            "the other device's edit is kept as a conflict version")
        XCTAssertEqual(serverText("docs/doc.txt"), "edited there\n", "the conflicted version is not uploaded over it")
        XCTAssertEqual(Shell.check("cat '\(there.path("docs/doc.txt"))'"), "edited there\n")

        // Keep both: the local version is uploaded, the other one becomes a sibling; both devices converge.
        let resolved = here.folio("versions resolve '\(here.path("docs/doc.txt"))' --keep both")
        XCTAssertEqual(resolved.status, 0, resolved.stderr)
        here.waitForUploads()
        for device in [here, there] {
            XCTAssertTrue(Shell.waitUntil(timeout: 30) {
                let names = self.names(device, "docs") ?? []
                let sibling = names.first { $0.hasPrefix("doc (conflict from the remote, ") }
                return names.count == 2 && names.contains("doc.txt") && sibling != nil
                    && self.text(device, "docs/doc.txt") == "edited here\n"
                    && self.text(device, "docs/" + (sibling ?? "")) == "edited there\n"
            }, "\(device.mountpoint): \(String(describing: names(device, "docs")))")
        }
        XCTAssertEqual(serverText("docs/doc.txt"), "edited here\n")
        XCTAssertEqual(serverNames("docs").count, 2, "\(serverNames("docs"))")
    }

    func testAnEditMadeOnTheServerReachesTheMount() throws {
        let device = try mount()
        Shell.check("mkdir '\(device.path("notes"))' && echo first > '\(device.path("notes/n.txt"))'")
        device.waitForUploads()
        XCTAssertEqual(Shell.check("cat '\(device.path("notes/n.txt"))'"), "first\n")
        let drive = Self.collection + "com.folio.drive/notes/"

        let put = try server.request("PUT", drive + "n.txt", body: Data("changed on the server\n".utf8))
        XCTAssertEqual(put.status, 204, put.text)
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) {
                Shell.run("cat '\(device.path("notes/n.txt"))'").stdout == "changed on the server\n"
            },
            "the mount shows: \(Shell.run("cat '\(device.path("notes/n.txt"))'").stdout)")
        let created = try server.request("PUT", drive + "new.txt", body: Data("new\n".utf8))
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.names(device, "notes") == ["n.txt", "new.txt"] })
        XCTAssertEqual(Shell.check("cat '\(device.path("notes/new.txt"))'"), "new\n")
        XCTAssertEqual(try server.request("DELETE", drive + "n.txt").status, 204)
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { self.names(device, "notes") == ["new.txt"] },
            "\(String(describing: names(device, "notes")))")
    }

    /// A rename (a change without content) of a document the server changed meanwhile, before this device saw
    /// the change: the device never takes the server's version for the content it has. It brings the server's
    /// content, and an edit here then builds on it: the server's edit is never lost.
    func testARenameOfADocumentChangedOnTheServerMeanwhileBringsTheServersContent() throws {
        let device = try mount(["--poll-interval", "600"])  // only a new enumeration (a restart) looks again
        Shell.check("echo one > '\(device.path("doc.txt"))'")
        device.waitForUploads()
        XCTAssertEqual(serverText("doc.txt"), "one\n")
        let drive = Self.collection + "com.folio.drive/"
        let put = try server.request("PUT", drive + "doc.txt", body: Data("two, from the server\n".utf8))
        XCTAssertEqual(put.status, 204, put.text)
        Shell.check("mv '\(device.path("doc.txt"))' '\(device.path("renamed.txt"))'")
        device.waitForUploads()
        XCTAssertEqual(serverText("renamed.txt"), "two, from the server\n")
        device.stop()
        try device.start()
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { self.text(device, "renamed.txt") == "two, from the server\n" },
            "the mount shows \(String(describing: text(device, "renamed.txt")))")
        Shell.check("echo 'three, from here' >> '\(device.path("renamed.txt"))'")
        device.waitForUploads()
        XCTAssertEqual(
            serverText("renamed.txt"), "two, from the server\nthree, from here\n", "the server's edit is kept")
    }

    func testALaterMountWhileTheServerIsDownShowsWhatTheStateKnows() throws {
        let device = try mount()
        Shell.check("echo kept > '\(device.path("kept.txt"))'")
        device.waitForUploads()
        device.stop()
        server.kill()
        try device.start()
        XCTAssertEqual(Shell.check("cat '\(device.path("kept.txt"))'"), "kept\n", "the content is local")
        XCTAssertTrue(device.folio("status '\(device.mountpoint)'").stdout.contains("provider: OFFLINE"))
        Shell.check("echo 'written offline' > '\(device.path("offline.txt"))'")
        try server.start()
        device.waitForUploads()
        XCTAssertEqual(serverText("offline.txt"), "written offline\n")
    }

    func testAStateSyncedWithTheServerIsNeverPointedAtAnotherRemote() throws {
        let device = try mount()
        Shell.check("echo here > '\(device.path("a.txt"))'")
        device.waitForUploads()
        device.stop()
        let folder = device.root + "/folder-remote"
        let other = Shell.run(
            "'\(MountFixture.executable)' mount --remote '\(folder)' --state '\(device.state)' '\(device.mountpoint)'",
            environment: device.environment)
        XCTAssertNotEqual(other.status, 0)
        XCTAssertTrue(other.stderr.contains("is not the remote this state was synced with"), other.stderr)
        let otherServer = Shell.run(
            "'\(MountFixture.executable)' mount --remote '\(server.baseURL.absoluteString)/elsewhere/' "
                + "--state '\(device.state)' '\(device.mountpoint)'",
            environment: device.environment)
        XCTAssertNotEqual(otherServer.status, 0)
        XCTAssertTrue(otherServer.stderr.contains("was synced with another remote"), otherServer.stderr)
        XCTAssertFalse(device.isMounted)
    }

    func testChangesOnAnotherDeviceFireInotifyEventsOnTheMount() throws {
        let here = try mount()
        let there = try mount()
        Shell.check("mkdir '\(here.path("shared"))'")
        here.waitForUploads()
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.names(there, "shared") == [] })
        let watcher = try InotifyWatcher(tree: there.mountpoint, directory: there.root)
        addTeardownBlock { watcher.stop() }

        Shell.check("echo one > '\(here.path("shared/a.txt"))'")
        watcher.expect("CREATE shared/a.txt", "a file created on the other device")
        Shell.check("mv '\(here.path("shared/a.txt"))' '\(here.path("shared/b.txt"))'")
        watcher.expect("MOVED_TO shared/b.txt", "a rename on the other device")
        let before = watcher.events.count
        Shell.check("echo 'edited' > '\(here.path("shared/b.txt"))'")
        watcher.expect("an edit on the other device") { event in
            let kinds = event.split(separator: " ").first?.split(separator: ",") ?? []
            return event.hasSuffix(" shared/b.txt")
                && kinds.contains { ["MODIFY", "CLOSE_WRITE", "ATTRIB"].contains(String($0)) }
                && watcher.events.firstIndex(of: event).map { $0 >= before } == true
        }
        Shell.check("rm '\(here.path("shared/b.txt"))'")
        watcher.expect("DELETE shared/b.txt", "a delete on the other device")
    }
}
