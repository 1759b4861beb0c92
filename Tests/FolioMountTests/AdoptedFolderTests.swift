import FolioCore
import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// Issue 14, "adopts an existing folder of documents": `folio mount --remote DIR` on a folder Folio did not
/// create mounts it as the Drive (its top-level items at the mount's root) and writes nothing into the user's
/// files or folders until something changes through the mount; Folio's own files are in `DIR/.folio/` only.
final class AdoptedFolderTests: XCTestCase {
    private var fixture: MountFixture!
    /// The user's folder of documents (the fixture's remote, never initialized as a remote by the test).
    private var archive: String { fixture.remote }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/fuse"), "needs /dev/fuse")
        fixture = try MountFixture(extraArguments: ["--poll-interval", "600"])
        addTeardownBlock { [fixture] in fixture?.tearDown() }
        addTeardownBlock { [weak self, fixture] in
            guard let self, let fixture, let run = self.testRun, run.failureCount + run.unexpectedExceptionCount > 0
            else { return }
            print("--- daemon log tail of \(self.name) ---\n" + String(fixture.log.suffix(6000)))
        }
    }

    /// A folder of documents as a user has one: nested folders, unicode names, symlinks (one dangling), an empty
    /// folder, a big sparse-ish file, and old times set on files and folders.
    private func fillArchive() {
        Shell.check("""
            set -e
            cd '\(archive)'
            mkdir -p 'Taxes/2019/receipts' 'Ünïcødé ✓/日本語' 'empty folder'
            printf 'first document\\n' > 'notes.txt'
            printf 'to be edited\\n' > 'edit me.txt'
            printf 'to be renamed\\n' > 'rename me.txt'
            printf 'to be deleted\\n' > 'delete me.txt'
            printf 'receipt\\n' > 'Taxes/2019/receipts/r1.txt'
            head -c 100000 /dev/urandom > 'Taxes/2019/scan.pdf'
            printf 'こんにちは\\n' > 'Ünïcødé ✓/日本語/挨拶.txt'
            truncate -s 48M 'big.img'
            printf 'middle' | dd of='big.img' bs=1 seek=20000000 conv=notrunc status=none
            printf 'end' | dd of='big.img' bs=1 seek=50331645 conv=notrunc status=none
            ln -s 'Taxes/2019/receipts/r1.txt' 'receipt link'
            ln -s '../nowhere' 'dangling link'
            chmod 640 'notes.txt'
            find . -mindepth 1 -exec touch -h -d '2003-04-05 06:07:08.123456789' {} +
            touch -h -d '2001-02-03 04:05:06' 'receipt link'
            touch -d '2004-05-06 07:08:09' .
            """)
    }

    /// Everything the file system says about the user's items below `folder` (not `.folio`, nor the mount's
    /// virtual folders): names, types, sizes of files, modification times, modes, symlink targets, the checksum
    /// of every file, and with `inodes` the inode numbers and the folder's own time. One line each.
    private func snapshot(_ folder: String, inodes: Bool = true) -> [String] {
        let skip = "-path ./.folio -prune -o -path ./.Recents -prune -o -path ./.Tags -prune -o"
        let top = inodes ? "" : "-mindepth 1"
        let inode = inodes ? " %i" : ""
        let listing = Shell.check("""
            cd '\(folder)' && find . \(top) \(skip) -type d -printf '%p %y %T@ %m\(inode)\\n' \
                -o \(skip) -printf '%p %y %s %T@ %m %l\(inode)\\n' | LC_ALL=C sort
            """)
        let sums = Shell.check(
            "cd '\(folder)' && find . \(skip) -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum")
        return (listing + sums).split(separator: "\n").map(String.init)
    }

    /// Fails with the lines only one side has, if the two differ.
    private func assertSameLines(
        _ lines: [String], _ expected: [String], _ what: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard lines != expected else { return }
        let extra = lines.filter { !expected.contains($0) }
        let missing = expected.filter { !lines.contains($0) }
        XCTFail("\(what): only here: \(extra); only expected: \(missing)", file: file, line: line)
    }

    /// Every extended attribute of the user's items, as `getfattr` shows them.
    private func attributes(_ folder: String) -> String {
        Shell.run(
            "cd '\(folder)' && find . -path ./.folio -prune -o -print0 | LC_ALL=C sort -z "
                + "| xargs -0 getfattr -h -d -m - 2>/dev/null"
        ).stdout
    }

    func testAnAdoptedFolderKeepsEverythingAndNothingIsWrittenIntoIt() throws {
        fillArchive()
        let before = snapshot(archive)
        let attributesBefore = attributes(archive)
        let marker = fixture.root + "/marker"
        Shell.check("touch '\(marker)'")

        try fixture.start()
        let mnt = fixture.mountpoint
        XCTAssertEqual(
            Shell.check("ls -A '\(mnt)'"),
            ".Recents\n.Tags\nTaxes\nbig.img\ndangling link\ndelete me.txt\nedit me.txt\nempty folder\nnotes.txt\n"
                + "receipt link\nrename me.txt\nÜnïcødé ✓\n",
            "the folder's items at the root (and the mount's virtual folders), .folio not among them")
        // The same names, sizes, times, modes, symlink targets and bytes through the mount (every file read).
        assertSameLines(snapshot(mnt, inodes: false), snapshot(archive, inodes: false), "the mount")
        XCTAssertEqual(Shell.check("readlink '\(mnt)/receipt link'"), "Taxes/2019/receipts/r1.txt\n")
        XCTAssertEqual(Shell.check("cat '\(mnt)/receipt link'"), "receipt\n")
        XCTAssertEqual(Shell.check("dd if='\(mnt)/big.img' bs=1 skip=20000000 count=6 status=none"), "middle")
        fixture.stop()

        assertSameLines(snapshot(archive), before, "names, inodes, times, modes and bytes as they were")
        XCTAssertEqual(attributes(archive), attributesBefore, "no extended attribute on the user's items")
        XCTAssertEqual(
            Shell.check("find '\(archive)' -path '\(archive)/.folio' -prune -o -newer '\(marker)' -print"), "",
            "nothing in the folder changed during a read-only session")
        XCTAssertEqual(Shell.check("ls -A '\(archive)' | grep -c '^\\.folio'"), "1\n", "only .folio was added")
        XCTAssertTrue(FileManager.default.fileExists(atPath: archive + "/.folio/manifest.json"))
    }

    func testChangesThroughTheMountLandAsPlainFilesAndASecondMountSeesTheSameIDs() throws {
        fillArchive()
        try fixture.start()
        let mnt = fixture.mountpoint
        let editedID = id(mnt + "/edit me.txt")
        let renamedID = id(mnt + "/rename me.txt")
        Shell.check("""
            set -e
            printf 'edited\\n' >> '\(mnt)/edit me.txt'
            printf 'new\\n' > '\(mnt)/Taxes/new.txt'
            mkdir '\(mnt)/New folder'
            mv '\(mnt)/rename me.txt' '\(mnt)/Taxes/2019/renamed.txt'
            rm '\(mnt)/delete me.txt'
            """)
        fixture.waitForUploads()
        XCTAssertEqual(try text("edit me.txt"), "to be edited\nedited\n")
        XCTAssertEqual(try text("Taxes/new.txt"), "new\n")
        XCTAssertEqual(try text("Taxes/2019/renamed.txt"), "to be renamed\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive + "/delete me.txt"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive + "/rename me.txt"))
        var isFolder: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: archive + "/New folder", isDirectory: &isFolder))
        XCTAssertTrue(isFolder.boolValue)
        XCTAssertEqual(attributes(archive), "", "plain files: no attribute on what Folio changed or made either")
        XCTAssertEqual(id(mnt + "/edit me.txt"), editedID)
        XCTAssertEqual(id(mnt + "/Taxes/2019/renamed.txt"), renamedID)
        let ids = allIDs(mnt)

        // A second daemon with a state of its own (another device) finds every item under the same id.
        let second = try MountFixture(extraArguments: ["--poll-interval", "600"], remote: archive)
        defer { second.tearDown() }
        try second.start()
        XCTAssertEqual(allIDs(second.mountpoint), ids)
        second.stop()
        // And so does this one, mounted again.
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(allIDs(mnt), ids)
    }

    /// The same save, when the daemon saw the editor's temporary file before it was renamed over the document (a
    /// race the test above lost once in a CI run, now made certain): replacing a file with a file keeps the
    /// target's identity, as a rename through the mount does (DESIGN.md §2: an atomic save keeps the item).
    func testAnAtomicReplaceWhoseTemporaryFileWasSeenFirstIsTheSameDocumentChanged() throws {
        let (mnt, inode, id) = try mountWithFirstDocument()
        Shell.check("printf 'second version\\n' > '\(archive)/notes.txt.tmp'")
        XCTAssertTrue(Shell.waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: mnt + "/notes.txt.tmp") },
                      "the temporary file shows first; log:\n\(fixture.log.suffix(2000))")
        Shell.check("mv '\(archive)/notes.txt.tmp' '\(archive)/notes.txt'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 20) {
                Shell.run("cat '\(mnt)/notes.txt'").stdout == "second version\n"
                    && !FileManager.default.fileExists(atPath: mnt + "/notes.txt.tmp")
            }, "the new version shows, the temporary file is gone; log:\n\(fixture.log.suffix(2000))")
        XCTAssertEqual(Shell.check("stat -c %i '\(mnt)/notes.txt'"), inode, "the same document (same node)")
        XCTAssertEqual(self.id(mnt + "/notes.txt"), id, "the same item")
        XCTAssertNotEqual(state(mnt + "/notes.txt"), "conflicted")
        XCTAssertEqual(Shell.check("ls -A '\(mnt)' | grep -c notes"), "1\n")
        // And after a restart (the id map keeps the new file's id).
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(self.id(mnt + "/notes.txt"), id, "the same item after a restart")
        XCTAssertEqual(Shell.check("cat '\(mnt)/notes.txt'"), "second version\n")
    }

    func testAUsersAtomicReplaceIsTheSameDocumentChanged() throws {
        let (mnt, inode, id) = try mountWithFirstDocument()
        // The user's own editor saves: a new file renamed over the old one (a new inode in the folder).
        Shell.check("printf 'second version\\n' > '\(archive)/.notes.txt.swp' && "
            + "mv '\(archive)/.notes.txt.swp' '\(archive)/notes.txt'")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 20) { Shell.run("cat '\(mnt)/notes.txt'").stdout == "second version\n" },
            "the new version shows; log:\n\(fixture.log.suffix(2000))")
        XCTAssertEqual(Shell.check("stat -c %i '\(mnt)/notes.txt'"), inode, "the same document (same node)")
        XCTAssertEqual(self.id(mnt + "/notes.txt"), id, "the same item: the provider keeps its id in .folio/")
        XCTAssertEqual(attributes(archive), "", "and nothing on the new file")
        XCTAssertNotEqual(state(mnt + "/notes.txt"), "conflicted")
        XCTAssertEqual(Shell.check("ls -A '\(mnt)' | grep -c notes"), "1\n")
        XCTAssertEqual(fixture.pendingUploads, 0, "nothing sent back")
    }

    func testAnAppContainerOfAnAdoptedFolderLivesInDotFolio() throws {
        fillArchive()
        try LocalProvider.adopt(at: FilePath(archive))
        try LocalProvider.addContainer(
            Container(id: ContainerID("com.example.notes"), displayName: "Notes", isPublic: true),
            at: FilePath(archive))
        try fixture.start()
        let mnt = fixture.mountpoint
        Shell.check("printf 'app doc\\n' > '\(mnt)/Notes/memo.txt'")
        fixture.waitForUploads()
        let container = archive + "/.folio/containers/com.example.notes"
        XCTAssertEqual(try String(contentsOfFile: container + "/memo.txt", encoding: .utf8), "app doc\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive + "/Notes"), "not among the user's items")
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive + "/com.example.notes"))
        XCTAssertEqual(Shell.check("cat '\(mnt)/notes.txt'"), "first document\n", "the Drive is the folder itself")
    }

    func testFoldersThatCannotBeAdoptedAreRefusedWithTheirReason() throws {
        let mnt = fixture.mountpoint
        let home = fixture.root + "/home"
        Shell.check("mkdir -p '\(home)/docs' && echo keep > '\(home)/docs/a.txt'")
        let cases: [(remote: String, mountpoint: String, environment: [String: String], message: String)] = [
            ("/", mnt, [:], "/ cannot be adopted"),
            (home, mnt, ["HOME": home], "is your home folder"),
            (fixture.root, mnt, [:], "is inside the remote folder"),
            (archive, archive + "/inside", [:], "is inside the remote folder"),
        ]
        Shell.check("echo doc > '\(archive)/doc.txt' && mkdir -p '\(archive)/inside'")
        for (remote, mountpoint, environment, message) in cases {
            let result = Shell.run(
                "'\(MountFixture.executable)' mount --remote '\(remote)' --state '\(fixture.root)/state-x' "
                    + "'\(mountpoint)'",
                environment: fixture.environment.merging(environment) { $1 })
            XCTAssertNotEqual(result.status, 0, remote)
            XCTAssertTrue(result.stderr.contains(message), "\(remote): \(result.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/.folio"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/.folio"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive + "/.folio"))

        // Inside another remote: one Folio made, and an adopted one.
        let made = fixture.root + "/made"
        try LocalProvider.initialize(at: FilePath(made))
        Shell.check("mkdir -p '\(made)/com.folio.drive/sub' && echo x > '\(made)/com.folio.drive/sub/x.txt'")
        try LocalProvider.adopt(at: FilePath(archive))
        for inner in [made + "/com.folio.drive/sub", archive + "/inside"] {
            let result = fixture.folio("mount --remote '\(inner)' --state '\(fixture.root)/state-y' '\(mnt)'")
            XCTAssertNotEqual(result.status, 0, inner)
            XCTAssertTrue(result.stderr.contains("is inside the Folio remote"), "\(inner): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: inner + "/.folio"))
        }
        // The state folder inside the folder.
        let result = fixture.folio("mount --remote '\(home)/docs' --state '\(home)/docs/state' '\(mnt)'")
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("is inside the remote folder"), result.stderr)
        XCTAssertEqual(Shell.check("cat '\(home)/docs/a.txt'"), "keep\n")
    }

    func testWhatTheDaemonCannotReadIsListedAndFailsClearlyWithNothingLost() throws {
        // The daemon without root's power to ignore permissions, so mode bits keep it out.
        let limited = try MountFixture(
            extraArguments: ["--poll-interval", "600"],
            launcher: ["/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"])
        defer { limited.tearDown() }
        let folder = limited.remote
        Shell.check("""
            set -e
            cd '\(folder)'
            printf 'open\\n' > readable.txt
            printf 'secret\\n' > secret.txt && chmod 000 secret.txt
            mkdir closed && printf 'inside\\n' > closed/inside.txt && chmod 000 closed
            """)
        let before = snapshot(folder)
        try limited.start()
        let mnt = limited.mountpoint
        XCTAssertEqual(
            Shell.check("ls '\(mnt)'"), "closed\nreadable.txt\nsecret.txt\n", String(limited.log.suffix(2000)))
        XCTAssertEqual(Shell.check("cat '\(mnt)/readable.txt'"), "open\n")
        let refused = Shell.run("cat '\(mnt)/secret.txt'")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("Permission denied"), "a clear error: \(refused.stderr)")
        XCTAssertEqual(Shell.run("ls '\(mnt)/closed'").stdout, "", "nothing listed in a folder it cannot read")
        limited.stop()
        assertSameLines(snapshot(folder), before, "nothing changed")
    }

    // MARK: Helpers

    /// The item id of a path in a mount.
    /// Mounts the filled archive; the mountpoint, and `notes.txt`'s inode and id there (its first version read).
    private func mountWithFirstDocument() throws -> (mnt: String, inode: String, id: String) {
        fillArchive()
        try fixture.start()
        let mnt = fixture.mountpoint
        XCTAssertEqual(Shell.check("cat '\(mnt)/notes.txt'"), "first document\n")
        return (mnt, Shell.check("stat -c %i '\(mnt)/notes.txt'"), id(mnt + "/notes.txt"))
    }

    private func id(_ path: String) -> String {
        Shell.check("getfattr --only-values -n user.folio.id '\(path)'")
    }

    /// The state of a path in a mount.
    private func state(_ path: String) -> String {
        Shell.check("getfattr --only-values -n user.folio.state '\(path)'")
    }

    /// Path and item id of everything in a mount (not its virtual folders), sorted.
    private func allIDs(_ mountpoint: String) -> String {
        Shell.check(
            "cd '\(mountpoint)' && find . -mindepth 1 \\( -path ./.Recents -o -path ./.Tags \\) -prune -o -print0 "
                + "| LC_ALL=C sort -z | while IFS= read -r -d '' p; do "
                + "printf '%s %s\\n' \"$p\" \"$(getfattr -h --only-values -n user.folio.id \"$p\")\"; done")
    }

    /// The text of a file in the user's folder.
    private func text(_ relative: String) throws -> String {
        try String(contentsOfFile: archive + "/" + relative, encoding: .utf8)
    }
}
