import Foundation
import XCTest

/// Saving keeps the document's identity for the editors people use (DESIGN.md §2 "Coordination"): vim, Emacs,
/// GIO (`gio save`) and LibreOffice, each driven for real where Debian has it, and by its exact sequence of system
/// calls otherwise. After the save the document has the same `user.folio.id`, its tags, the new content, and the
/// remote has the same item (its `user.folio` attribute names the id) with the new content: one modification,
/// not a delete and a create.
///
/// The mounts live below `/tmp`, which vim (`backupskip`) and Emacs (`backup-enable-predicate`) exempt from
/// backups by default; the tests lift that exemption only, so the editors save as they do anywhere else.
class EditorSaveMountTests: MountTestCase {
    private let tags = "red,work"

    private func folioID(_ path: String) -> String {
        Shell.run("getfattr --only-values -n user.folio.id '\(path)'").stdout
    }

    /// The item id the remote keeps for a Drive document.
    private func remoteID(_ relative: String) -> String? { fixture.remoteItemID(relative) }

    /// Writes `content` to `name` on the mount, waits until the remote has it, tags it; returns its id.
    private func uploadedTaggedDocument(_ name: String, _ content: String) throws -> String {
        try content.write(toFile: fixture.path(name), atomically: false, encoding: .utf8)
        fixture.waitForUploads()
        Shell.check("setfattr -n user.xdg.tags -v '\(tags)' '\(fixture.path(name))'")
        let id = folioID(fixture.path(name))
        XCTAssertFalse(id.isEmpty)
        XCTAssertEqual(remoteID(name), id)
        return id
    }

    /// After a save: the same item with its tags and the new content, here and, once uploaded, on the remote.
    private func expectSameDocument(
        _ name: String, id: String, content: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        let path = fixture.path(name)
        XCTAssertEqual(folioID(path), id, "the saved file is the same item", file: file, line: line)
        XCTAssertEqual(
            Shell.run("getfattr --only-values -n user.xdg.tags '\(path)'").stdout, tags, "tags survive the save",
            file: file, line: line)
        XCTAssertEqual(try? String(contentsOfFile: path, encoding: .utf8), content, file: file, line: line)
        fixture.waitForUploads(file: file, line: line)
        XCTAssertEqual(fixture.remoteText(name), content, "the remote has the new content", file: file, line: line)
        XCTAssertEqual(remoteID(name), id, "the remote item is the same one", file: file, line: line)
    }

    private func inode(_ path: String) -> String { Shell.check("stat -c %i '\(path)'") }

    /// The backup an editor's save left is a new file: it has none of the document's tags, and `.Tags/` lists
    /// the document only (the tags stayed with the item that kept the name).
    private func expectUntaggedBackup(
        _ backup: String, of name: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        let attribute = Shell.run("getfattr --only-values -n user.xdg.tags '\(fixture.path(backup))'")
        XCTAssertNotEqual(attribute.status, 0, "the backup has no tags: \(attribute.stdout)", file: file, line: line)
        for tag in tags.split(separator: ",") {
            XCTAssertEqual(
                Shell.run("ls '\(fixture.path(".Tags/\(tag)"))'").stdout, "\(name)\n", "only the document is tagged",
                file: file, line: line)
        }
    }

    private func remoteNames() -> [String] {
        fixture.remoteNames("").filter { !$0.hasPrefix(".folio") }
    }

    // MARK: vim

    /// vim's default (`writebackup`, `backupcopy=auto`, which renames here): `doc.txt` is renamed to `doc.txt~`,
    /// a new `doc.txt` is written and fsynced, then `doc.txt~` is removed. A second device sees an edit of the
    /// same item (same inode there), never a delete and a create.
    func testVimDefaultSaveKeepsTheDocument() throws {
        let id = try uploadedTaggedDocument("doc.txt", "one\n")
        let device = try MountFixture(extraArguments: ["--poll-interval", "600"], remote: fixture.remote)
        addTeardownBlock { device.tearDown() }
        try device.start()
        XCTAssertEqual(folioID(device.path("doc.txt")), id)
        let deviceInode = inode(device.path("doc.txt"))
        let before = inode(fixture.path("doc.txt"))

        Shell.check("vim -u NONE -N -es -c 'set backupskip=' -c 'normal Gotwo' -c 'wq' '\(fixture.path("doc.txt"))'")

        XCTAssertNotEqual(inode(fixture.path("doc.txt")), before, "vim wrote a new file (the rename path)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.path("doc.txt~")))
        expectSameDocument("doc.txt", id: id, content: "one\ntwo\n")
        XCTAssertEqual(remoteNames(), ["doc.txt"], "nothing else reached the remote (no backup, no 4913)")
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            (try? String(contentsOfFile: device.path("doc.txt"), encoding: .utf8)) == "one\ntwo\n"
        }, "the other device sees the save")
        XCTAssertEqual(folioID(device.path("doc.txt")), id)
        XCTAssertEqual(inode(device.path("doc.txt")), deviceInode, "an edit of the same item on the other device")
    }

    /// `backupcopy=no` with `backup` kept: every save renames; the second one removes the old backup first and
    /// renames the document over its name. The document and its backup keep their items.
    func testVimRenamingSavesWithBackupKeepTheDocument() throws {
        let id = try uploadedTaggedDocument("doc.txt", "one\n")
        let vim = "vim -u NONE -N -es -c 'set backupskip= backupcopy=no backup'"
        Shell.check("\(vim) -c 'normal Gotwo' -c 'wq' '\(fixture.path("doc.txt"))'")
        expectSameDocument("doc.txt", id: id, content: "one\ntwo\n")
        XCTAssertEqual(fixture.remoteText("doc.txt~"), "one\n", "the backup is a document of its own")
        let backupID = try XCTUnwrap(remoteID("doc.txt~"))
        XCTAssertNotEqual(backupID, id)
        expectUntaggedBackup("doc.txt~", of: "doc.txt")

        Shell.check("\(vim) -c 'normal Gothree' -c 'wq' '\(fixture.path("doc.txt"))'")
        expectSameDocument("doc.txt", id: id, content: "one\ntwo\nthree\n")
        XCTAssertEqual(fixture.remoteText("doc.txt~"), "one\ntwo\n")
        XCTAssertEqual(remoteID("doc.txt~"), backupID, "the backup keeps its item too")
        XCTAssertEqual(remoteNames(), ["doc.txt", "doc.txt~"])
    }

    // MARK: Emacs

    /// Emacs's default: the first save of a session renames `doc.txt` to the backup `doc.txt~` and writes a new
    /// `doc.txt` (the backup stays); a later session's first save renames the document over the old backup.
    func testEmacsSavesKeepTheDocument() throws {
        let id = try uploadedTaggedDocument("doc.txt", "one\n")
        let emacs = { (line: String) in
            """
            emacs --batch -Q --eval '(progn (setq backup-enable-predicate (lambda (_name) t)) \
            (find-file "\(self.fixture.path("doc.txt"))") (goto-char (point-max)) (insert "\(line)\\n") \
            (save-buffer))'
            """
        }
        Shell.check(emacs("two"))
        expectSameDocument("doc.txt", id: id, content: "one\ntwo\n")
        XCTAssertEqual(fixture.remoteText("doc.txt~"), "one\n", "the backup is a document of its own")
        let backupID = try XCTUnwrap(remoteID("doc.txt~"))
        XCTAssertNotEqual(backupID, id)
        expectUntaggedBackup("doc.txt~", of: "doc.txt")

        Shell.check(emacs("three"))
        expectSameDocument("doc.txt", id: id, content: "one\ntwo\nthree\n")
        XCTAssertEqual(fixture.remoteText("doc.txt~"), "one\ntwo\n")
        XCTAssertEqual(remoteID("doc.txt~"), backupID, "the backup keeps its item too")
        XCTAssertEqual(remoteNames(), ["doc.txt", "doc.txt~"], "no lock file or anything else reached the remote")
    }

    // MARK: GIO

    /// `g_file_replace` (GTK applications): `.goutputstream-XXXXXX` written (the document opened for writing
    /// meanwhile) and renamed over the document while still open. With `--backup`, GIO's `link` of the document
    /// to `doc.txt~` is refused (`EPERM`), so it renames the document to `doc.txt~` and then the temp to
    /// `doc.txt`: the temp takes the document over, the backup is a new document.
    func testGioSaveKeepsTheDocument() throws {
        let id = try uploadedTaggedDocument("doc.txt", "one\n")
        Shell.check("printf 'two\\n' | gio save '\(fixture.path("doc.txt"))'")
        expectSameDocument("doc.txt", id: id, content: "two\n")
        XCTAssertEqual(remoteNames(), ["doc.txt"])

        Shell.check("printf 'three\\n' | gio save --backup '\(fixture.path("doc.txt"))'")
        expectSameDocument("doc.txt", id: id, content: "three\n")
        XCTAssertEqual(fixture.remoteText("doc.txt~"), "two\n")
        XCTAssertEqual(remoteNames(), ["doc.txt", "doc.txt~"])
        expectUntaggedBackup("doc.txt~", of: "doc.txt")
    }

    // MARK: LibreOffice

    /// LibreOffice 7.4's save over an existing document, as `strace -f soffice --headless --convert-to odt`
    /// shows it: a temp `luXXXX.tmp` in the document's folder, the document opened for writing and locked
    /// (closed again before the temp is written), the lock file `.~lock.NAME#`, the temp written and fsynced, an
    /// exclusive create of the document (`EEXIST`), the temp renamed over it, `chown`/`chmod`, the document
    /// opened, locked and fsynced, the lock file removed.
    func testLibreOfficeSaveSequenceKeepsTheDocument() throws {
        let id = try uploadedTaggedDocument("doc.odt", "version one")
        let script = """
            import fcntl, os
            folder = '\(fixture.mountpoint)'
            doc, tmp = folder + '/doc.odt', folder + '/lu170129ptw.tmp'
            lock = folder + '/.~lock.doc.odt#'
            os.close(os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
            t = os.open(tmp, os.O_RDWR)
            fcntl.lockf(t, fcntl.LOCK_EX | fcntl.LOCK_NB)
            o = os.open(doc, os.O_RDWR)
            fcntl.lockf(o, fcntl.LOCK_EX | fcntl.LOCK_NB)
            l = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            os.pwrite(l, b',root,host,25.11.2026 19:23,file:///doc.odt;', 0)
            os.close(l)
            os.close(o)
            os.pwrite(t, b'version two', 0)
            os.fsync(t)
            os.close(t)
            try:
                os.open(doc, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
                raise SystemExit('the document vanished')
            except FileExistsError:
                pass
            os.rename(tmp, doc)
            os.chown(doc, -1, 0)
            os.chmod(doc, 0o644)
            n = os.open(doc, os.O_RDWR)
            fcntl.lockf(n, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.fsync(n)
            os.close(n)
            os.unlink(lock)
            print('saved')
            """
        XCTAssertEqual(Shell.check("python3 - <<'EOF'\n\(script)\nEOF"), "saved\n")
        expectSameDocument("doc.odt", id: id, content: "version two")
        XCTAssertEqual(remoteNames(), ["doc.odt"])
    }

    /// The real LibreOffice, where it is installed (not in `scripts/bootstrap`: it is large): `--convert-to`
    /// over an existing document.
    func testLibreOfficeConvertOverTheDocumentKeepsIt() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/usr/bin/soffice"), "LibreOffice is not installed")
        let soffice = "soffice -env:UserInstallation=file://\(fixture.root)/lo-profile --headless --convert-to odt"
            + " --outdir '\(fixture.mountpoint)'"
        let source = fixture.root + "/doc.txt"
        try "version one\n".write(toFile: source, atomically: false, encoding: .utf8)
        Shell.check("\(soffice) '\(source)'", timeout: 300)
        fixture.waitForUploads()
        Shell.check("setfattr -n user.xdg.tags -v '\(tags)' '\(fixture.path("doc.odt"))'")
        let id = folioID(fixture.path("doc.odt"))
        XCTAssertEqual(remoteID("doc.odt"), id)

        try "version two\n".write(toFile: source, atomically: false, encoding: .utf8)
        Shell.check("\(soffice) '\(source)'", timeout: 300)
        let converted = try Data(contentsOf: URL(fileURLWithPath: fixture.path("doc.odt")))
        XCTAssertEqual(folioID(fixture.path("doc.odt")), id)
        XCTAssertEqual(Shell.run("getfattr --only-values -n user.xdg.tags '\(fixture.path("doc.odt"))'").stdout, tags)
        fixture.waitForUploads()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture.remotePath("doc.odt"))), converted)
        XCTAssertEqual(remoteID("doc.odt"), id)
        XCTAssertEqual(remoteNames(), ["doc.odt"])
    }

    // MARK: The steps of a save never reach the remote

    /// vim's sequence by hand, with a pause between the rename and the new file in which the uploader sends
    /// another, newer change: the rename is held back (the remote keeps the document at its name), and after the
    /// save the remote has one modification of it.
    func testTheRenameOfASaveIsNotUploadedInBetween() throws {
        // A window longer than the pause can take on a loaded machine.
        fixture.stop()
        fixture.extraArguments += ["--save-window", "60"]
        try fixture.start()
        let id = try uploadedTaggedDocument("doc.txt", "one\n")
        let script = """
            import json, os, subprocess, sys, time
            folder, remote = '\(fixture.mountpoint)', '\(fixture.remotePath(""))'
            doc = folder + '/doc.txt'
            os.rename(doc, doc + '~')
            with open(folder + '/other.txt', 'w') as other:
                other.write('newer change')
            def uploaded():
                status = subprocess.run(['\(MountFixture.executable)', 'status', '--json', folder],
                                        capture_output=True, text=True).stdout
                summary = json.loads(status or '{}').get('summary', {})
                return os.path.exists(remote + '/other.txt') and summary.get('uploadsInFlight') == 0
            deadline = time.monotonic() + 30
            while not uploaded():
                if time.monotonic() > deadline:
                    sys.exit('other.txt was not uploaded')
                time.sleep(0.02)
            print('in between:', sorted(n for n in os.listdir(remote) if not n.startswith('.folio') and n != '.DAV'))
            fd = os.open(doc, os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b'one\\ntwo\\n')
            os.fsync(fd)
            os.close(fd)
            os.unlink(doc + '~')
            """
        let output = Shell.run("python3 - <<'EOF'\n\(script)\nEOF", environment: fixture.environment)
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertEqual(output.stdout, "in between: ['doc.txt', 'other.txt']\n", "the rename waited for the save")
        expectSameDocument("doc.txt", id: id, content: "one\ntwo\n")
        XCTAssertEqual(remoteNames(), ["doc.txt", "other.txt"])
    }

    /// `kill -9` of the daemon in the middle of a save loses nothing: after the rename (made durable by an fsync
    /// of the folder: the remote then gets the rename), and after the new file was fsynced but before the backup
    /// was removed (the document keeps its item with the new content, the backup is uploaded as a new document).
    func testACrashInTheMiddleOfASaveLosesNothing() throws {
        let id = try uploadedTaggedDocument("doc.txt", "one\n")
        let doc = fixture.path("doc.txt")
        Shell.check("""
            python3 -c "
            import os
            os.rename('\(doc)', '\(doc)~')
            os.fsync(os.open('\(fixture.mountpoint)', os.O_RDONLY))
            "
            """)
        fixture.kill9()
        try fixture.start()
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("doc.txt~"), "one\n")
        XCTAssertEqual(remoteID("doc.txt~"), id, "the rename reached the remote")
        XCTAssertEqual(remoteNames(), ["doc.txt~"])

        Shell.check("mv '\(doc)~' '\(doc)'")
        fixture.waitForUploads()
        Shell.check("""
            python3 -c "
            import os
            os.rename('\(doc)', '\(doc)~')
            fd = os.open('\(doc)', os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b'one\\\\ntwo\\\\n')
            os.fsync(fd)
            os.close(fd)
            "
            """)
        fixture.kill9()
        try fixture.start()
        expectSameDocument("doc.txt", id: id, content: "one\ntwo\n")
        XCTAssertEqual(fixture.remoteText("doc.txt~"), "one\n", "the backup is kept as a document of its own")
        XCTAssertNotEqual(remoteID("doc.txt~"), id)
        XCTAssertEqual(remoteNames(), ["doc.txt", "doc.txt~"])
    }
}
