import Foundation
import XCTest

/// Folder times are the user's: kept through uploads, the remote's echo of them, remounts and other devices;
/// `tar x` and `rsync -a` round trips keep every folder's time.
final class FolderTimeTests: MountTestCase {
    /// Modification time of `path`, in seconds.
    private func mtime(_ path: String) -> Int {
        Int(Shell.check("stat -c %Y '\(path)'").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// 2020-01-01 00:00:00 UTC.
    private let userTime = 1_577_836_800

    func testAFolderTimeSetByTheUserIsKeptAfterUploadRemountAndOnAnotherDevice() throws {
        Shell.check("""
            set -e
            cd '\(fixture.mountpoint)'
            mkdir -p d/inner
            echo one > d/one.txt
            echo two > d/inner/two.txt
            touch -d @\(userTime) d d/inner
            """)
        XCTAssertEqual(mtime(fixture.path("d")), userTime)
        fixture.waitForUploads()
        // The remote gets the user's time, and its echo (the changes above, seen by push) does not undo it.
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.mtime(self.fixture.remotePath("d")) == self.userTime
                && self.mtime(self.fixture.remotePath("d/inner")) == self.userTime
        }, "remote folder times: \(mtime(fixture.remotePath("d"))) \(mtime(fixture.remotePath("d/inner")))")
        fixture.waitForUploads()
        XCTAssertEqual(mtime(fixture.path("d")), userTime)
        XCTAssertEqual(mtime(fixture.path("d/inner")), userTime)

        // Another device sees the user's time.
        let device = try MountFixture(extraArguments: ["--poll-interval", "600"], remote: fixture.remote)
        addTeardownBlock { device.tearDown() }
        try device.start()
        XCTAssertEqual(mtime(device.path("d")), userTime)
        XCTAssertEqual(mtime(device.path("d/inner")), userTime)
        device.stop()

        // After a remount too.
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(mtime(fixture.path("d")), userTime)
        XCTAssertEqual(mtime(fixture.path("d/inner")), userTime)

        // A child created after the user set the time changes it, as POSIX says.
        Shell.check("echo three > '\(fixture.path("d/three.txt"))'")
        XCTAssertGreaterThan(mtime(fixture.path("d")), userTime)
    }

    func testRenamesInsideFoldersDoNotUndoTheirTimesSetAfter() throws {
        Shell.check("mkdir -p '\(fixture.path("r/a"))' '\(fixture.path("r/b"))' && echo x > '\(fixture.path("r/f"))'")
        fixture.waitForUploads()
        Shell.check("""
            set -e
            cd '\(fixture.mountpoint)'
            mv r/a r/a2
            mv r/f r/b/f
            touch -d @\(userTime) r r/b
            """)
        fixture.waitForUploads()
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.mtime(self.fixture.remotePath("r")) == self.userTime
                && self.mtime(self.fixture.remotePath("r/b")) == self.userTime
        }, "remote folder times: \(mtime(fixture.remotePath("r"))) \(mtime(fixture.remotePath("r/b")))")
        fixture.waitForUploads()
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(mtime(fixture.path("r")), userTime)
        XCTAssertEqual(mtime(fixture.path("r/b")), userTime)
    }

    /// A tree of folders and files with old times, made outside the mount.
    private func makeTree(_ source: String) {
        Shell.check("""
            set -e
            mkdir -p '\(source)'
            cd '\(source)'
            for d in a a/b a/b/c e f/g; do
                mkdir -p $d
                for i in 1 2 3; do echo "$d $i" > $d/file$i.txt; done
            done
            ln -s a/file1.txt link
            find . -depth -exec touch -h -d @\(userTime) {} +
            touch -d @\(userTime + 86400) a/b
            """)
    }

    /// Lines of `rsync --itemize-changes` that say a folder differs.
    private func changedFolders(from source: String, to destination: String) -> [String] {
        Shell.check("rsync -a --dry-run --itemize-changes '\(source)/' '\(destination)/'")
            .split(separator: "\n").map(String.init).filter { $0.dropFirst().hasPrefix("d") }
    }

    func testTarExtractAndCopyArchiveKeepFolderTimes() throws {
        let source = fixture.root + "/tree"
        makeTree(source)
        Shell.check("cd '\(fixture.root)' && tar cf tree.tar tree")
        Shell.check("cd '\(fixture.mountpoint)' && tar xf '\(fixture.root)/tree.tar'")
        Shell.check("cp -a '\(source)' '\(fixture.path("copied"))'")
        for copy in ["tree", "copied"] {
            XCTAssertEqual(changedFolders(from: source, to: fixture.path(copy)), [], copy)
        }
        fixture.waitForUploads()
        // Past the remote's echo of the uploads inside each folder.
        for copy in ["tree", "copied"] {
            XCTAssertTrue(Shell.waitUntil(timeout: 30) {
                self.changedFolders(from: source, to: self.fixture.remotePath(copy)).isEmpty
            }, "on the remote: \(changedFolders(from: source, to: fixture.remotePath(copy)))")
        }
        fixture.waitForUploads()
        fixture.stop()
        try fixture.start()
        for copy in ["tree", "copied"] {
            XCTAssertEqual(changedFolders(from: source, to: fixture.path(copy)), [], copy)
        }
    }

    func testRsyncRoundTripReportsNoFolderChanged() throws {
        let source = fixture.root + "/tree"
        makeTree(source)
        Shell.check("rsync -a '\(source)/' '\(fixture.path("copy"))/'")
        fixture.waitForUploads()
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.changedFolders(from: source, to: self.fixture.remotePath("copy")).isEmpty
        }, "on the remote: \(changedFolders(from: source, to: fixture.remotePath("copy")))")
        fixture.waitForUploads()
        XCTAssertEqual(changedFolders(from: fixture.path("copy"), to: source), [])
        XCTAssertEqual(changedFolders(from: source, to: fixture.path("copy")), [])

        // A second sync deletes, replaces (a temporary file renamed over) and moves files into folders whose
        // times it then sets: the remote's answers to those changes do not undo the times either.
        Shell.check("""
            set -e
            cd '\(source)'
            rm a/file1.txt
            echo changed > a/b/file2.txt
            mv e/file3.txt f/g/moved.txt
            touch -d @\(userTime - 86400) a a/b e f/g
            """)
        Shell.check("rsync -a --delete '\(source)/' '\(fixture.path("copy"))/'")
        fixture.waitForUploads()
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.changedFolders(from: source, to: self.fixture.remotePath("copy")).isEmpty
        }, "on the remote: \(changedFolders(from: source, to: fixture.remotePath("copy")))")
        fixture.waitForUploads()
        XCTAssertEqual(changedFolders(from: source, to: fixture.path("copy")), [])
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(changedFolders(from: fixture.path("copy"), to: source), [])
    }
}
