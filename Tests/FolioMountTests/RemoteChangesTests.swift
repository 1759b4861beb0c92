import FolioCore
import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// Issue 3 "Remote changes": changes made on the remote by someone else — a person editing the local
/// provider's folder, or another Folio mount of the same remote — appear in the mount through push (the
/// poll interval is ten minutes here, so nothing else could bring them), with kernel caches invalidated.
final class RemoteChangesTests: MountTestCase {
    override var mountArguments: [String] { ["--poll-interval", "600"] }

    override func prepareRemote() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("""
            set -e
            mkdir -p '\(drive)/docs' '\(drive)/other'
            echo 'first' > '\(drive)/docs/a.txt'
            echo 'pinned first' > '\(drive)/docs/pinned.txt'
            """)
        try LocalProvider.addContainer(
            Container(id: ContainerID("com.example.notes"), displayName: "Notes", isPublic: true),
            at: FilePath(fixture.remote))
    }

    func testAMoveAcrossContainersOnTheRemoteShows() throws {
        XCTAssertEqual(read("docs/a.txt"), "first\n")
        let id = Shell.check("getfattr --only-values -n user.folio.id '\(fixture.path("docs/a.txt"))'")
        let destination = fixture.remotePath("a.txt", container: "com.example.notes")
        Shell.check("mv '\(fixture.remotePath("docs/a.txt"))' '\(destination)'")
        eventually("the document shows in the other container's folder, and only there") {
            self.read("Notes/a.txt") == "first\n" && self.read("docs/a.txt") == nil
        }
        XCTAssertEqual(
            Shell.check("getfattr --only-values -n user.folio.container '\(fixture.path("Notes/a.txt"))'"),
            "com.example.notes")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.id '\(fixture.path("Notes/a.txt"))'"), id)
        XCTAssertEqual(fixture.pendingUploads, 0, "remote changes are not uploaded back")
    }

    private func read(_ relative: String) -> String? {
        let result = Shell.run("cat '\(fixture.path(relative))'")
        return result.status == 0 ? result.stdout : nil
    }

    private func eventually(_ what: String, _ condition: @escaping () -> Bool) {
        XCTAssertTrue(Shell.waitUntil(timeout: 15, condition), "\(what); log:\n\(fixture.log.suffix(2000))")
    }

    func testEditsOfTheRemoteFolderAppearThroughPush() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        XCTAssertEqual(read("docs/a.txt"), "first\n")  // materialized, cached by the kernel
        XCTAssertEqual(Shell.check("ls '\(fixture.path("docs"))'"), "a.txt\npinned.txt\n")
        Shell.check("setfattr -n user.folio.pinned -v 1 '\(fixture.path("docs/pinned.txt"))'")
        eventually("pinned file downloaded") {
            Shell.run("getfattr --only-values -n user.folio.state '\(self.fixture.path("docs/pinned.txt"))'")
                .stdout == "materialized"
        }
        // A reader of the current version keeps it while the remote changes.
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let script = "import sys,time\nf=open(sys.argv[1])\nprint('ready',flush=True)\nsys.stdin.readline()\n"
            + "print(f.read(),end='')"
        reader.arguments = ["-c", script, fixture.path("docs/a.txt")]
        let input = Pipe()
        let output = Pipe()
        reader.standardInput = input
        reader.standardOutput = output
        try reader.run()
        var ready = Data()
        while !ready.contains(UInt8(ascii: "\n")) {  // "ready\n": the file is open
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            ready.append(chunk)
        }

        Shell.check(
            "echo 'second, longer' > '\(drive)/docs/a.txt.tmp' && mv '\(drive)/docs/a.txt.tmp' '\(drive)/docs/a.txt'")
        eventually("a changed document shows its new content") { self.read("docs/a.txt") == "second, longer\n" }
        try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
        reader.waitUntilExit()
        let rest = ready.drop { $0 != UInt8(ascii: "\n") }.dropFirst()
            + output.fileHandleForReading.readDataToEndOfFile()
        XCTAssertEqual(String(decoding: rest, as: UTF8.self), "first\n", "an open reader keeps the version it opened")

        Shell.check("echo 'pinned second' > '\(drive)/docs/pinned.txt'")
        eventually("a pinned document is downloaded again") {
            Shell.run("getfattr --only-values -n user.folio.state '\(self.fixture.path("docs/pinned.txt"))'")
                .stdout == "materialized" && self.read("docs/pinned.txt") == "pinned second\n"
        }

        Shell.check("echo 'new' > '\(drive)/docs/new.txt'")
        eventually("a created document appears") { self.read("docs/new.txt") == "new\n" }
        Shell.check("mv '\(drive)/docs/new.txt' '\(drive)/other/moved.txt'")
        eventually("a move across folders shows") {
            self.read("other/moved.txt") == "new\n"
                && !FileManager.default.fileExists(atPath: self.fixture.path("docs/new.txt"))
        }
        Shell.check("rm '\(drive)/other/moved.txt'")
        eventually("a delete shows") { Shell.check("ls '\(self.fixture.path("other"))'").isEmpty }
        XCTAssertEqual(fixture.pendingUploads, 0, "remote changes are not uploaded back")
    }

    /// An open reader of a version the remote has since replaced by a longer one reads exactly its version, many
    /// rounds, while another thread stats the file all along (each answer changes the inode's attributes in the
    /// kernel while the read is in flight; the kernel then fills a short cached read with zeros up to the size it
    /// was told, so the size it is told must be the cached reader's).
    func testAnOpenReaderOfAReplacedVersionNeverGetsZerosWhileOthersStatManyRounds() throws {
        let script = """
            import os, sys, threading, time
            remote, mounted, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
            def put(text):
                with open(remote + ".tmp", "w") as f: f.write(text)
                os.rename(remote + ".tmp", remote)
            def shows(text):
                deadline = time.time() + 15
                while time.time() < deadline:
                    try:
                        with open(mounted, "rb") as f:
                            if f.read() == text.encode(): return
                    except OSError: pass
                    time.sleep(0.02)
                sys.exit("the mount never showed %r" % text)
            for r in range(rounds):
                old = "round %d old\\n" % r
                new = old + "x" * (100 + r) + "\\n"
                put(old); shows(old)
                reader = open(mounted, "rb")
                put(new); shows(new)
                stop = threading.Event()
                def hammer():
                    while not stop.is_set(): os.stat(mounted)
                worker = threading.Thread(target=hammer); worker.start()
                got = reader.read()
                stop.set(); worker.join(); reader.close()
                if got != old.encode(): sys.exit("round %d: the reader got %r, not %r" % (r, got, old))
            print("ok")
            """
        let result = Shell.run(
            "python3 -c '\(script.replacingOccurrences(of: "'", with: "'\\''"))' "
                + "'\(fixture.remote)/com.folio.drive/docs/a.txt' '\(fixture.path("docs/a.txt"))' 40",
            timeout: 300)
        XCTAssertEqual(result.stdout, "ok\n", result.stderr)
    }

    /// The remote's folder goes away for a moment (a share unmounted and mounted again): the provider replaces
    /// its watcher, and push goes on with the new one (with a ten-minute poll, only push can bring the change).
    func testPushGoesOnAfterTheRemoteWasAwayForAMoment() throws {
        let m = fixture.mountpoint
        XCTAssertEqual(read("docs/a.txt"), "first\n")
        let away = fixture.root + "/remote-away"
        Shell.check("mv '\(fixture.remote)' '\(away)' && mkdir '\(fixture.remote)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.fixture.folio("status '\(m)'").stdout.contains("provider: OFFLINE: ")
        }, fixture.folio("status '\(m)'").stdout + String(fixture.log.suffix(2000)))
        Shell.check("rmdir '\(fixture.remote)' && mv '\(away)' '\(fixture.remote)'")
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            self.fixture.folio("status '\(m)'").stdout.contains("provider: online")
        }, fixture.folio("status '\(m)'").stdout + String(fixture.log.suffix(2000)))

        for round in 1...3 {
            Shell.check("echo 'after \(round)' > '\(fixture.remotePath("docs/after.txt"))'")
            eventually("a change by hand after the remote came back arrives by push (round \(round))") {
                self.read("docs/after.txt") == "after \(round)\n"
            }
        }
        XCTAssertEqual(fixture.pendingUploads, 0, "remote changes are not uploaded back")
    }

    /// A folder made through the mount is one the provider knows whole (it made it empty): what is put in it by
    /// hand on the remote afterwards arrives by push like any other change.
    func testAHandChangeInAFolderMadeThroughTheMountShows() throws {
        Shell.check("mkdir '\(fixture.path("made"))' && mkdir '\(fixture.path("made/deeper"))'")
        fixture.waitForUploads()
        Shell.check("echo 'by hand' > '\(fixture.remotePath("made/by-hand.txt"))'")
        eventually("a file put by hand into a folder made through the mount appears") {
            self.read("made/by-hand.txt") == "by hand\n"
        }
        Shell.check("echo 'deeper' > '\(fixture.remotePath("made/deeper/also.txt"))'")
        eventually("and in a folder made inside it") { self.read("made/deeper/also.txt") == "deeper\n" }

        // After a restart the new daemon's provider never made or listed them: the folders are listed again
        // when looked at, and watched from then on.
        fixture.stop()
        Shell.check("echo 'while stopped' > '\(fixture.remotePath("made/deeper/stopped.txt"))'")
        try fixture.start()
        XCTAssertEqual(read("made/deeper/stopped.txt"), "while stopped\n")
        Shell.check("echo 'after restart' > '\(fixture.remotePath("made/deeper/after.txt"))'")
        eventually("a hand change after the restart appears") {
            self.read("made/deeper/after.txt") == "after restart\n"
        }
    }

    func testAnotherMountOfTheSameRemoteIsAnotherDevice() throws {
        let device = try MountFixture(extraArguments: ["--poll-interval", "600"], remote: fixture.remote)
        addTeardownBlock { device.tearDown() }
        try device.start()
        Shell.check("mkdir '\(device.path("shared"))' && echo 'from B' > '\(device.path("shared/b.txt"))'")
        device.waitForUploads()
        eventually("a create on the other device appears") { self.read("shared/b.txt") == "from B\n" }
        Shell.check("mv '\(device.path("shared/b.txt"))' '\(device.path("shared/c.txt"))'")
        device.waitForUploads()
        eventually("a rename on the other device shows") {
            self.read("shared/c.txt") == "from B\n" && self.read("shared/b.txt") == nil
        }
        Shell.check("echo 'edited on B' > '\(device.path("shared/c.txt"))'")
        device.waitForUploads()
        eventually("an edit on the other device shows") { self.read("shared/c.txt") == "edited on B\n" }
        Shell.check("rm '\(device.path("shared/c.txt"))'")
        device.waitForUploads()
        eventually("a delete on the other device shows") { self.read("shared/c.txt") == nil }
    }
}

/// Without push (a provider that can only be polled), remote changes arrive with the default poll.
class PolledRemoteChangesTests: MountTestCase {
    override var mountArguments: [String] { ["--no-push"] }

    func testRemoteEditsArriveWithTheDefaultPoll() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("echo 'polled' > '\(drive)/polled.txt'")
        XCTAssertTrue(Shell.waitUntil(timeout: 15) {
            Shell.run("cat '\(self.fixture.path("polled.txt"))'").stdout == "polled\n"
        }, fixture.log.suffix(2000).description)
        XCTAssertTrue(fixture.log.contains("remote changes: polled, polled every 1.0 seconds"), fixture.log)
    }
}
