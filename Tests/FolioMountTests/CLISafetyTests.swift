import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// What a newcomer tripped over in the command-line tool: a mount over a running Folio mount, a second daemon on
/// a state folder in use, queued uploads at unmount (`unmount --wait`), what a failed mount leaves behind,
/// `folio --version`, and counts in the singular.
final class CLISafetyTests: XCTestCase {
    private var home = ""
    /// The daemons this test started, to end by process id at teardown (also if they cannot be asked any more).
    private let daemons = LockedPIDs()
    private var mnt: String { home + "/mnt" }
    private var mnt2: String { home + "/mnt2" }

    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/fuse"), "needs /dev/fuse")
        let folder = NSTemporaryDirectory() + "folio-home-\(UUID().uuidString.prefix(8))"
        for directory in [folder + "/run", folder + "/mnt", folder + "/mnt2"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        home = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        addTeardownBlock { [home, daemons] in
            // Every daemon a test started is ended by its process id, also after a failure.
            let mountpoints = [home + "/Folio", home + "/mnt", home + "/mnt2"]
            let pids = daemons.values + mountpoints.compactMap { Self.daemonPID(of: $0, home: home) }
            for mountpoint in mountpoints {  // all of them, should mounts be stacked
                Shell.run("for i in 1 2 3 4 5; do fusermount3 -u -z '\(mountpoint)' 2>/dev/null || break; done; true")
            }
            for pid in pids where !Shell.waitUntil(timeout: 20, { kill(pid, 0) != 0 }) { kill(pid, SIGKILL) }
            try? FileManager.default.removeItem(atPath: home)
        }
    }

    private static func folio(_ arguments: String, home: String, timeout: TimeInterval = 120) -> CommandResult {
        Shell.run(
            "'\(MountFixture.executable)' \(arguments)", timeout: timeout,
            environment: ["HOME": home, "XDG_RUNTIME_DIR": home + "/run"])
    }

    private func folio(_ arguments: String, timeout: TimeInterval = 120) -> CommandResult {
        Self.folio(arguments, home: home, timeout: timeout)
    }

    private var environment: [String: String] { ["HOME": home, "XDG_RUNTIME_DIR": home + "/run"] }

    private static func status(_ mountpoint: String, home: String) -> [String: Any]? {
        let result = folio("status --json '\(mountpoint)'", home: home, timeout: 30)
        guard result.status == 0 else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
    }

    private func status(_ mountpoint: String) -> [String: Any]? { Self.status(mountpoint, home: home) }

    private static func daemonPID(of mountpoint: String, home: String) -> Int32? {
        (status(mountpoint, home: home)?["pid"] as? Int).map(Int32.init)
    }

    private func daemonPID(of mountpoint: String) -> Int32? { Self.daemonPID(of: mountpoint, home: home) }

    private func pendingUploads(_ mountpoint: String) -> Int? {
        (status(mountpoint)?["summary"] as? [String: Any])?["pendingUploads"] as? Int
    }

    private func isMounted(_ mountpoint: String) -> Bool {
        let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return mounts.split(separator: "\n").contains {
            $0.split(separator: " ").dropFirst(4).first == Substring(mountpoint)
        }
    }

    private func mount(_ remote: String, at mountpoint: String, file: StaticString = #filePath, line: UInt = #line) {
        let result = folio("mount --remote '\(remote)' '\(mountpoint)'")
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        if let pid = daemonPID(of: mountpoint) { daemons.append(pid) }
    }

    /// Makes every call of the provider of `remote` fail as offline, or (`false`) brings it back.
    private func setOffline(_ remote: String, _ offline: Bool) throws {
        let path = remote + "/.folio/simulate.json"
        if offline {
            try #"{"offline": true}"#.write(toFile: path, atomically: true, encoding: .utf8)
        } else {
            try FileManager.default.removeItem(atPath: path)
        }
    }

    func testMountOverARunningFolioMountIsRefusedAndTheFirstStillAnswers() throws {
        let first = home + "/remote1"
        mount(first, at: mnt)
        let pid = try XCTUnwrap(daemonPID(of: mnt))
        Shell.check("echo kept > '\(mnt)/kept.txt'")

        let message = "\(mnt) is already a Folio mount of \(first)"
        let second = folio("mount --remote '\(home)/remote2' '\(mnt)'")
        XCTAssertNotEqual(second.status, 0)
        XCTAssertTrue(second.stderr.contains(message), second.stderr)
        let foreground = folio("mount --foreground --remote '\(home)/remote2' --state '\(home)/state2' '\(mnt)'")
        XCTAssertNotEqual(foreground.status, 0)
        XCTAssertTrue(foreground.stderr.contains(message), foreground.stderr)
        let view = folio("mount --app com.example.notes --of '\(mnt)' '\(mnt)'")
        XCTAssertNotEqual(view.status, 0)
        XCTAssertTrue(view.stderr.contains(message), view.stderr)
        let demo = folio("demo '\(mnt)'")
        XCTAssertNotEqual(demo.status, 0)
        XCTAssertTrue(demo.stderr.contains(message), demo.stderr)

        // The first mount is the one that answers, and the only Folio mount there.
        XCTAssertEqual(daemonPID(of: mnt), pid, "folio status still reaches the first mount's daemon")
        XCTAssertEqual(Shell.check("cat '\(mnt)/kept.txt'"), "kept\n")
        let stacked = Shell.check("grep -c ' \(mnt) ' /proc/self/mountinfo; true")
        XCTAssertEqual(stacked.trimmingCharacters(in: .whitespacesAndNewlines), "1", "nothing stacked over it")
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/state2"), "the refused mount made no state")
        XCTAssertEqual(folio("unmount '\(mnt)'").status, 0)
    }

    func testSecondDaemonOnAStateFolderInUseIsRefusedSayingWhere() throws {
        let remote = home + "/remote"
        mount(remote, at: mnt)
        let pid = try XCTUnwrap(daemonPID(of: mnt))

        let again = folio("mount --remote '\(remote)' '\(mnt2)'")
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("\(remote) is already mounted at \(mnt)"), again.stderr)
        XCTAssertTrue(again.stderr.contains("pid \(pid)"), again.stderr)
        XCTAssertFalse(isMounted(mnt2))

        // Another remote given the same state folder: the message names the mount that holds it.
        let state = try XCTUnwrap(status(mnt)?["stateDirectory"] as? String)
        let other = folio("mount --remote '\(home)/other' --state '\(state)' '\(mnt2)'")
        XCTAssertNotEqual(other.status, 0)
        XCTAssertTrue(
            other.stderr.contains("state folder \(state) is in use by the mount of \(remote) at \(mnt)"), other.stderr)
        XCTAssertFalse(isMounted(mnt2))
        XCTAssertEqual(daemonPID(of: mnt), pid, "the first mount still answers")
        XCTAssertTrue(FileManager.default.fileExists(atPath: state + "/metadata.sqlite"), "its state is untouched")
        XCTAssertEqual(folio("unmount '\(mnt)'").status, 0)
    }

    func testUnmountSaysHowManyUploadsAreQueuedAndTheyResumeAtTheNextMount() throws {
        let remote = home + "/remote"
        mount(remote, at: mnt)
        try setOffline(remote, true)
        Shell.check("echo one > '\(mnt)/one.txt'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.pendingUploads(self.mnt) == 1 })
        let first = folio("unmount '\(mnt)'")
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(
            first.stdout.contains("1 upload is still queued; it resumes at the next mount of \(remote)"), first.stdout)

        mount(remote, at: mnt)
        Shell.check("echo two > '\(mnt)/two.txt'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.pendingUploads(self.mnt) == 2 })
        let second = folio("unmount '\(mnt)'")
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.stdout.contains("2 uploads are still queued; they resume"), second.stdout)
        XCTAssertNil(try? String(contentsOfFile: remote + "/com.folio.drive/one.txt", encoding: .utf8))

        try setOffline(remote, false)
        mount(remote, at: mnt)
        XCTAssertTrue(
            Shell.waitUntil(timeout: 60) {
                (try? String(contentsOfFile: remote + "/com.folio.drive/two.txt", encoding: .utf8)) == "two\n"
                    && (try? String(contentsOfFile: remote + "/com.folio.drive/one.txt", encoding: .utf8)) == "one\n"
            }, "the queued uploads were made after the next mount")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.pendingUploads(self.mnt) == 0 })
        let last = folio("unmount '\(mnt)'")
        XCTAssertEqual(last.status, 0, last.stderr)
        XCTAssertFalse(last.stdout.contains("queued"), last.stdout)
    }

    func testUnmountWaitReturnsOnlyOnceTheQueueDrained() throws {
        let remote = home + "/remote"
        mount(remote, at: mnt)
        try setOffline(remote, true)
        Shell.check("echo waited > '\(mnt)/waited.txt'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.pendingUploads(self.mnt) == 1 })

        let output = home + "/unmount.out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? handle.close() }
        let unmount = Process()
        unmount.executableURL = URL(fileURLWithPath: MountFixture.executable)
        unmount.arguments = ["unmount", "--wait", mnt]
        unmount.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        unmount.standardOutput = handle
        unmount.standardError = handle
        try unmount.run()
        defer {
            if unmount.isRunning { kill(unmount.processIdentifier, SIGKILL) }
            unmount.waitUntilExit()
        }
        let text = { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { text().contains("waiting for 1 upload") }, "a progress line: \(text())")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { text().contains("the remote is offline") },
            "once the daemon knows, the progress line says why it waits: \(text())")
        XCTAssertTrue(unmount.isRunning, "still waiting while the remote is offline")
        XCTAssertTrue(isMounted(mnt))

        try setOffline(remote, false)
        XCTAssertTrue(Shell.waitUntil(timeout: 90) { !unmount.isRunning }, text())
        unmount.waitUntilExit()
        XCTAssertEqual(unmount.terminationStatus, 0, text())
        XCTAssertTrue(text().contains("unmounted \(mnt)"), text())
        XCTAssertFalse(text().contains("queued"), text())
        XCTAssertEqual(try String(contentsOfFile: remote + "/com.folio.drive/waited.txt", encoding: .utf8), "waited\n")
        XCTAssertFalse(isMounted(mnt))
    }

    func testFailedMountLeavesNoStateFolderItCreated() throws {
        // A folder that cannot be adopted: inside another remote.
        try LocalProvider.initialize(at: FilePath(home + "/outer"))
        let notRemote = home + "/outer/com.folio.drive/inner"
        try FileManager.default.createDirectory(atPath: notRemote, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: notRemote + "/precious.txt", contents: Data("keep".utf8))
        let stateHome = home + "/.local/state/folio"

        let background = folio("mount --remote '\(notRemote)' '\(mnt)'")
        XCTAssertNotEqual(background.status, 0)
        XCTAssertTrue(background.stderr.contains("is inside the Folio remote"), background.stderr)
        XCTAssertFalse(background.stderr.contains("mount failed: error:"), "one prefix: \(background.stderr)")
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: stateHome)) ?? [], [])

        let foreground = folio("mount --foreground --remote '\(notRemote)' --state '\(home)/new-state' '\(mnt)'")
        XCTAssertNotEqual(foreground.status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/new-state"))

        // A state folder that was there before stays, with what it held.
        try FileManager.default.createDirectory(atPath: home + "/old-state", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: home + "/old-state/note", contents: Data("mine".utf8))
        for flag in ["", "--foreground"] {
            let result = folio("mount \(flag) --remote '\(notRemote)' --state '\(home)/old-state' '\(mnt)'")
            XCTAssertNotEqual(result.status, 0)
            XCTAssertEqual(try String(contentsOfFile: home + "/old-state/note", encoding: .utf8), "mine")
        }
        XCTAssertEqual(try String(contentsOfFile: notRemote + "/precious.txt", encoding: .utf8), "keep")
        XCTAssertFalse(isMounted(mnt))
    }

    func testVersion() throws {
        let version = folio("--version")
        XCTAssertEqual(version.status, 0, version.stderr)
        let text = version.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertNotNil(text.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+"#, options: .regularExpression), text)
    }

    func testCountsOfOneAreSingular() throws {
        let remote = home + "/remote"
        mount(remote, at: mnt)
        Shell.check("mkdir '\(mnt)/one' && echo x > '\(mnt)/one/x.txt'")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) { self.pendingUploads(self.mnt) == 0 })
        let evicted = folio("evict '\(mnt)/one'")
        XCTAssertEqual(evicted.status, 0, evicted.stderr)
        XCTAssertTrue(evicted.stdout.contains("evicted 1 file (2 bytes)"), evicted.stdout)
        let downloaded = folio("download '\(mnt)/one'")
        XCTAssertTrue(downloaded.stdout.contains("downloaded 1 file (2 bytes)"), downloaded.stdout)
        let pinned = folio("pin '\(mnt)/one/x.txt'")
        XCTAssertTrue(pinned.stdout.contains("(1 item)"), pinned.stdout)
        XCTAssertEqual(folio("unmount '\(mnt)'").status, 0)
    }
}

/// Process ids collected by a test and read by its teardown.
final class LockedPIDs: @unchecked Sendable {
    private let lock = NSLock()
    private var pids: [Int32] = []

    func append(_ pid: Int32) {
        lock.lock()
        pids.append(pid)
        lock.unlock()
    }

    var values: [Int32] {
        lock.lock()
        defer { lock.unlock() }
        return pids
    }
}
