import Foundation
import XCTest

/// Issue 14 "Enumeration on demand": a mount is ready once the containers are known; a folder's children are
/// listed when the folder is first looked up in or listed, and only then; remote changes come by anchor and reach
/// listed folders however deep and however big the remote.
class OnDemandListingTests: MountTestCase {
    override var mountArguments: [String] { ["--poll-interval", "600"] }

    /// Folders on the remote (`d000`…), and files in each: 100,000 files in the big remote.
    private var folders: Int { name.contains("Big") ? 200 : 40 }
    private var filesPerFolder: Int { name.contains("Big") ? 500 : 25 }

    override func prepareRemote() throws {
        if name.contains("Big") { try skipOverWebDAV("the slow link is the network simulation") }
        // Generated directly on the remote (a small python loop: no ids yet, the provider gives them).
        let script = """
            import os, sys
            root, folders, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            for f in range(folders):
                d = os.path.join(root, "d%03d" % f)
                os.mkdir(d)
                for i in range(files):
                    with open(os.path.join(d, "f%04d.txt" % i), "w") as out:
                        out.write("%d/%d\\n" % (f, i))
            deep = os.path.join(root, "d007", "a", "b", "c")
            os.makedirs(deep)
            with open(os.path.join(deep, "old.txt"), "w") as out:
                out.write("old\\n")
            """
        let path = fixture.root + "/generate.py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        Shell.check("python3 '\(path)' '\(fixture.remotePath(""))' \(folders) \(filesPerFolder)", timeout: 300)
        if name.contains("Big") {
            // Every provider call takes 300 ms: a walk of the whole remote (one call per folder) would take a
            // minute, more than the mount's budget; listing on demand takes a few calls.
            try fixture.simulateNetwork(#"{"latencyMilliseconds": 300}"#)
        }
    }

    private var summary: [String: Any] { fixture.status()["summary"] as? [String: Any] ?? [:] }

    /// 200 folders behind a slow link (a walk of the whole remote, folder by folder, would not fit in the mount's
    /// budget): the mount comes up at once with the root listed, listing one folder lists that folder only, and
    /// `folio status` shows the other folders were never listed.
    func testABigRemoteMountsAtOnceAndListsOneFolderOnly() throws {
        let before = summary
        // (The root may still be listing: the mount does not wait long for it.)
        XCTAssertLessThanOrEqual(before["foldersListed"] as? Int ?? 99, 1, "at most the root was listed: \(before)")
        XCTAssertEqual(Shell.check("ls '\(fixture.path("d042"))' | wc -l"), "\(filesPerFolder)\n")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("d042/f0007.txt"))'"), "42/7\n")
        let after = summary
        XCTAssertEqual(after["foldersListed"] as? Int, 2, "the root and d042 only: \(after)")
        XCTAssertEqual(after["foldersNotListed"] as? Int, folders - 1, "every other folder: \(after)")
        XCTAssertEqual(Shell.check("ls '\(fixture.mountpoint)' | grep -c '^d'"), "\(folders)\n")
        // What was listed is kept: after a restart nothing is listed again before it is looked at.
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(summary["foldersListed"] as? Int, 2)
        XCTAssertEqual(Shell.check("ls '\(fixture.path("d042"))' | wc -l"), "\(filesPerFolder)\n")
    }

    /// A file created, and one edited, four folders down in a big tree reach the mount and its inotify watchers;
    /// folders nobody looked at stay unlisted meanwhile.
    func testAChangeDeepInTheTreeReachesTheMountAndInotify() throws {
        let deep = "d007/a/b/c"
        XCTAssertEqual(Shell.check("ls '\(fixture.path(deep))'"), "old.txt\n")
        let watcher = try InotifyWatcher(
            ["--format", "%e %w%f", fixture.path(deep)], base: fixture.mountpoint, directory: fixture.root)
        addTeardownBlock { watcher.stop() }

        Shell.check("echo new > '\(fixture.remotePath(deep + "/new.txt"))'")
        watcher.expect("CREATE \(deep)/new.txt", "a file created deep on the remote")
        XCTAssertEqual(Shell.check("cat '\(fixture.path(deep + "/new.txt"))'"), "new\n")

        Shell.check("echo edited > '\(fixture.remotePath(deep + "/old.txt"))'")
        watcher.expect("an edit deep on the remote") { event in
            let kinds = event.split(separator: " ").first?.split(separator: ",") ?? []
            return event.hasSuffix(" \(deep)/old.txt")
                && kinds.contains { ["MODIFY", "CLOSE_WRITE", "ATTRIB"].contains(String($0)) }
        }
        XCTAssertTrue(Shell.waitUntil(timeout: 15) {
            Shell.run("cat '\(self.fixture.path(deep + "/old.txt"))'").stdout == "edited\n"
        })
        // Root, d007, a, b, c: nothing else was listed.
        XCTAssertEqual(summary["foldersListed"] as? Int, 5, "\(summary)")
    }

    /// An anchor the provider can no longer answer for (its change journal deleted) makes the mount list again
    /// the folders it had listed: what was changed by hand meanwhile shows, and every local change made while the
    /// remote was out of reach is kept and uploaded afterwards.
    func testAnExpiredAnchorResyncsTheListedFoldersAndKeepsLocalChanges() throws {
        try skipOverWebDAV(
            "expires the anchor by removing the local provider's journal, offline by the network simulation")
        XCTAssertEqual(Shell.check("ls '\(fixture.path("d001"))' | wc -l"), "\(filesPerFolder)\n")
        XCTAssertEqual(Shell.check("ls '\(fixture.path("d002"))' | wc -l"), "\(filesPerFolder)\n")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("d001/f0003.txt"))'"), "1/3\n")  // here, to edit offline
        try fixture.simulateNetwork(#"{"offline": true}"#)
        // Local changes that cannot be uploaded yet: a new file, an edit, a delete.
        Shell.check("echo mine > '\(fixture.path("d001/local.txt"))'")
        Shell.check("echo edited here > '\(fixture.path("d001/f0003.txt"))'")
        Shell.check("rm '\(fixture.path("d001/f0004.txt"))'")
        // Meanwhile, by hand on the remote: a new file and a delete; and no anchor of before is answered any more.
        Shell.check("echo by hand > '\(fixture.remotePath("d002/hand.txt"))'")
        Shell.check("rm '\(fixture.remotePath("d002/f0005.txt"))'")
        Shell.check("rm '\(fixture.remote)/.folio/journal/com.folio.drive'")
        try fixture.simulateNetwork(nil)

        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            Shell.run("cat '\(self.fixture.path("d002/hand.txt"))'").stdout == "by hand\n"
                && !FileManager.default.fileExists(atPath: self.fixture.path("d002/f0005.txt"))
        }, "the hand changes show after the resync; log:\n\(fixture.log.suffix(3000))")
        XCTAssertTrue(fixture.log.contains("expired"), "the resync came from the expired anchor")
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            (try? String(contentsOfFile: self.fixture.remotePath("d001/local.txt"), encoding: .utf8)) == "mine\n"
                && (try? String(contentsOfFile: self.fixture.remotePath("d001/f0003.txt"), encoding: .utf8))
                    == "edited here\n"
                && !FileManager.default.fileExists(atPath: self.fixture.remotePath("d001/f0004.txt"))
        }, "the local changes reach the remote; status: \(fixture.status())")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("d001/local.txt"))' '\(fixture.path("d001/f0003.txt"))'"),
                       "mine\nedited here\n", "and stay in the mount")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("d001/f0004.txt")))
        XCTAssertEqual(Shell.check("ls '\(fixture.path("d001"))' | wc -l"), "\(filesPerFolder)\n")
    }

    /// Race, many rounds: a file moved by hand from a listed folder into a folder the mount lists at that very
    /// moment (the move reaches the mount twice: in the folder's listing and in the change set that reports it)
    /// is in its new folder afterwards, with its content, and gone from the old one: never lost, never in both.
    func testAFileMovedByHandIntoAFolderBeingListedIsNeverLost() throws {
        let rounds = 30  // folders d010…d039, never looked at before their round
        for round in 0..<rounds {
            Shell.check("echo \(round) > '\(fixture.remotePath("d000/moved-\(round).txt"))'")
        }
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            Shell.run("ls '\(self.fixture.path("d000"))' | grep -c '^moved-'").stdout == "\(rounds)\n"
        }, "the files to move are seen in d000")
        for round in 0..<rounds {
            let name = "moved-\(round).txt"
            let folder = String(format: "d%03d", 10 + round)
            let move = "mv '\(fixture.remotePath("d000/" + name))' '\(fixture.remotePath(folder + "/"))'"
            let list = "ls '\(fixture.path(folder))' > /dev/null"
            // Which one starts first alternates; both run at once.
            Shell.check(round % 2 == 0 ? "(\(move)) & \(list); wait" : "(\(list)) & \(move); wait")
            XCTAssertTrue(Shell.waitUntil(timeout: 20) {
                Shell.run("cat '\(self.fixture.path(folder + "/" + name))'").stdout == "\(round)\n"
                    && !FileManager.default.fileExists(atPath: self.fixture.path("d000/" + name))
            }, "round \(round): \(name) is in \(folder) only; \(folder): "
                + Shell.run("ls '\(fixture.path(folder))' | grep moved").stdout + "; log:\n\(fixture.log.suffix(2000))")
        }
        XCTAssertEqual(Shell.check("ls '\(fixture.path("d000"))' | grep -c '^moved-' || true"), "0\n")
    }

    /// The names (`find -printf '%P'`, sorted) under `root`, without Folio's own entries.
    private func tree(_ root: String) -> [String] {
        Shell.check("cd '\(root)' && find . -mindepth 1 -path './.*' -prune -o -printf '%P\\n' | sort")
            .split(separator: "\n").map(String.init)
    }

    /// Issue 14, mount again: the daemon reads only folders and what is in progress from its store before it
    /// mounts, and every other item with its folder, when first needed or in the background. Many rounds of: stop,
    /// change by hand on the remote (a delete, an edit, a new file, a move between folders), start and walk the
    /// tree at once, while the background reader runs: the walk shows the remote as it is, a moved file keeps its
    /// inode (the same document), downloaded content and a change waiting for upload are kept.
    func testAStateMountedAgainShowsEveryItemWhileTheStoreIsReadFolderByFolder() throws {
        try skipOverWebDAV("changes the remote by hand while no daemon runs")
        XCTAssertEqual(tree(fixture.mountpoint), tree(fixture.remotePath("")), "the first walk")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("d005/f0001.txt"))'"), "5/1\n")  // downloaded
        let rounds = 6
        for round in 0..<rounds {
            // (The new folder is listed first, so its listing names the file while the old folder's stored files
            // may not be read yet: listed the other way, the file leaves the tree with its old folder's listing
            // before the new one names it, and comes back as a new node, as it always did.)
            let from = String(format: "d%03d", 20 + round), to = String(format: "d%03d", 10 + round)
            let moved = Shell.check("stat -c %i '\(fixture.path(from + "/f0002.txt"))'")
            try fixture.simulateNetwork(#"{"offline": true}"#)
            Shell.check("echo waiting \(round) > '\(fixture.path("d003/local-\(round).txt"))'")  // not uploaded yet
            fixture.stop()
            try fixture.simulateNetwork(nil)
            Shell.check("rm '\(fixture.remotePath(from + "/f0000.txt"))'")
            Shell.check("echo edited \(round) > '\(fixture.remotePath(from + "/f0001.txt"))'")
            Shell.check("echo new \(round) > '\(fixture.remotePath(to + "/new-\(round).txt"))'")
            Shell.check("mv '\(fixture.remotePath(from + "/f0002.txt"))' '\(fixture.remotePath(to + "/moved-\(round).txt"))'")
            try fixture.start()
            Shell.check("ls '\(fixture.path(to))' > /dev/null")
            let walked = tree(fixture.mountpoint)
            XCTAssertTrue(Shell.waitUntil(timeout: 30) {
                FileManager.default.fileExists(atPath: self.fixture.remotePath("d003/local-\(round).txt"))
            }, "round \(round): the change waiting for upload reaches the remote")
            XCTAssertEqual(walked, tree(fixture.remotePath("")), "round \(round): the walk right after the mount")
            XCTAssertEqual(Shell.check("stat -c %i '\(fixture.path(to + "/moved-\(round).txt"))'"), moved,
                           "round \(round): a file moved by hand is the same document")
            XCTAssertEqual(Shell.check("cat '\(fixture.path(from + "/f0001.txt"))' '\(fixture.path(to + "/new-\(round).txt"))'"),
                           "edited \(round)\nnew \(round)\n", "round \(round)")
            XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.state '\(fixture.path("d005/f0001.txt"))'"),
                           "materialized", "round \(round): downloaded content is kept")
        }
        XCTAssertEqual(Shell.check("cat '\(fixture.path("d003/local-\(rounds - 1).txt"))'"), "waiting \(rounds - 1)\n")
    }
}
