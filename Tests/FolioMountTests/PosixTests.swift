import FolioCore
import Foundation
import XCTest

/// POSIX behaviour the issue lists, and clear errors for what Folio refuses.
class PosixTests: MountTestCase {
    override var mountArguments: [String] { ["--allow-other"] }

    func testOpenHandlesSurviveUnlinkAndRenameOver() throws {
        let script = """
            import os, sys
            d = sys.argv[1]
            p = os.path.join(d, 'victim')
            with open(p, 'w') as f: f.write('still here')
            fd = os.open(p, os.O_RDWR)
            os.unlink(p)
            assert not os.path.exists(p)
            assert os.pread(fd, 100, 0) == b'still here'
            os.pwrite(fd, b'STILL', 0)
            assert os.pread(fd, 100, 0) == b'STILL here'
            assert os.fstat(fd).st_size == 10
            os.close(fd)
            q = os.path.join(d, 'target')
            with open(q, 'w') as f: f.write('old')
            r = open(q)
            with open(q + '.tmp', 'w') as f: f.write('new')
            os.rename(q + '.tmp', q)
            assert r.read() == 'old'
            assert open(q).read() == 'new'
            print('ok')
            """
        XCTAssertEqual(Shell.check("python3 - '\(fixture.mountpoint)' <<'EOF'\n\(script)\nEOF"), "ok\n")
    }

    func testRenameOverIsAtomicForReaders() throws {
        let script = """
            import os, sys, threading
            d = sys.argv[1]
            p = os.path.join(d, 'atomic.txt')
            with open(p, 'w') as f: f.write('v0')
            stop = False
            errors = []
            def reader():
                while not stop:
                    try:
                        with open(p) as f:
                            v = f.read()
                        if not v.startswith('v'): errors.append(v)
                    except OSError as e:
                        errors.append(str(e))
            t = threading.Thread(target=reader); t.start()
            for i in range(1, 200):
                with open(p + '.tmp', 'w') as f: f.write('v%d' % i)
                os.rename(p + '.tmp', p)
            stop = True; t.join()
            assert not errors, errors[:5]
            print('ok')
            """
        XCTAssertEqual(Shell.check("python3 - '\(fixture.mountpoint)' <<'EOF'\n\(script)\nEOF", timeout: 120), "ok\n")
    }

    func testRefusedOperationsHaveClearErrors() throws {
        let m = fixture.mountpoint
        Shell.check("echo x > '\(m)/file'")
        XCTAssertTrue(Shell.run("ln '\(m)/file' '\(m)/hard'").stderr.contains("Operation not permitted"))
        let long = String(repeating: "n", count: 256)
        XCTAssertTrue(Shell.run("touch '\(m)/\(long)'").stderr.contains("File name too long"))
        let reserved = Shell.run("touch '\(m)/.folio-reserved'")
        XCTAssertTrue(reserved.stderr.contains("Invalid argument"), reserved.stderr)
        XCTAssertTrue(Shell.run("mkdir '\(m)/.folio-dir'").stderr.contains("Invalid argument"))
        let rename = "import os,sys,errno\ntry: os.rename(sys.argv[1], sys.argv[2])\nexcept OSError as e: print(errno.errorcode[e.errno])"
        XCTAssertEqual(Shell.check("python3 -c \"\(rename)\" '\(m)/file' '\(m)/.folio-x'"), "EINVAL\n")
        XCTAssertEqual(Shell.check("cat '\(m)/file'"), "x\n", "nothing lost by the refused operations")
        XCTAssertEqual(Shell.check("ls -A '\(m)'"), ".Recents\n.Tags\nfile\n", "nothing half-created")
        XCTAssertTrue(Shell.run("rmdir '\(m)'/nonexistent").stderr.contains("No such file"))
        Shell.check("mkdir '\(m)/full' && touch '\(m)/full/x'")
        XCTAssertTrue(Shell.run("rmdir '\(m)/full'").stderr.contains("Directory not empty"))
    }

    func testFifoIsLocalOnly() throws {
        Shell.check("mkfifo '\(fixture.path("pipe"))' && (echo through > '\(fixture.path("pipe"))' &) && test \"$(cat '\(fixture.path("pipe"))')\" = through")
        Shell.check("echo z > '\(fixture.path("marker"))'")
        fixture.waitForUploads()
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.remotePath("marker")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.remotePath("pipe")), "FIFOs are never uploaded")
    }

    func testModesOwnersTimesAndPermissions() throws {
        try skipOverWebDAV(
            "checks the remote file's own mtime, which a WebDAV server sets itself (Folio's is a property there)")
        let file = fixture.path("private.txt")
        Shell.check("echo secret > '\(file)' && chmod 600 '\(file)' && chown 1234:5678 '\(file)' && touch -m -d '2001-02-03 04:05:06 UTC' '\(file)'")
        XCTAssertEqual(Shell.check("stat -c '%a %u %g %Y' '\(file)'"), "600 1234 5678 981173106\n")
        Shell.check("echo open > '\(fixture.path("public.txt"))' && chmod 644 '\(fixture.path("public.txt"))'")
        // Another user: the kernel enforces the mode bits (default_permissions).
        let denied = Shell.run("setpriv --reuid 4321 --regid 4321 --clear-groups cat '\(file)'")
        XCTAssertTrue(denied.stderr.contains("Permission denied"), denied.stderr)
        XCTAssertEqual(Shell.run("setpriv --reuid 4321 --regid 4321 --clear-groups cat '\(fixture.path("public.txt"))'").stdout, "open\n")
        let write = Shell.run("setpriv --reuid 4321 --regid 4321 --clear-groups sh -c 'echo x >> \(fixture.path("public.txt"))'")
        XCTAssertTrue(write.stderr.contains("Permission denied"), write.stderr)
        fixture.waitForUploads()
        XCTAssertEqual(Shell.check("stat -c '%Y' '\(fixture.remotePath("private.txt"))'"), "981173106\n")
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(Shell.check("stat -c '%a %u %g %Y' '\(file)'"), "600 1234 5678 981173106\n", "kept across remounts")
    }

    func testExtendedAttributesAndLocks() throws {
        let file = fixture.path("tagged.txt")
        Shell.check("echo t > '\(file)' && setfattr -n user.xdg.tags -v 'red,blue' '\(file)' && setfattr -n user.custom -v 0x00ff '\(file)'")
        Shell.check("mkdir '\(fixture.path("sub"))' && mv '\(file)' '\(fixture.path("sub/renamed.txt"))'")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.xdg.tags '\(fixture.path("sub/renamed.txt"))'"), "red,blue")
        XCTAssertTrue(Shell.check("getfattr -d '\(fixture.path("sub/renamed.txt"))'").contains("user.custom"))
        let readOnly = Shell.run("setfattr -n user.folio.state -v dirty '\(fixture.path("sub/renamed.txt"))'")
        XCTAssertNotEqual(readOnly.status, 0)
        XCTAssertTrue(Shell.run("setfattr -n trusted.x -v 1 '\(fixture.path("sub/renamed.txt"))'").status != 0)
        Shell.check("setfattr -x user.custom '\(fixture.path("sub/renamed.txt"))'")
        XCTAssertFalse(Shell.check("getfattr -d '\(fixture.path("sub/renamed.txt"))'").contains("user.custom"))
        // flock and fcntl locks between two processes.
        let lock = fixture.path("lockfile")
        Shell.check("touch '\(lock)'")
        let result = Shell.run("""
            flock -x '\(lock)' sleep 2 &
            sleep 0.5
            flock -n -x '\(lock)' true && echo acquired || echo refused
            wait
            """)
        XCTAssertEqual(result.stdout, "refused\n")
        let fcntl = """
            import fcntl, os, sys, subprocess
            f = open(sys.argv[1], 'r+')
            fcntl.lockf(f, fcntl.LOCK_EX)
            child = "import fcntl,sys\\ntry:\\n  fcntl.lockf(open(sys.argv[1],'r+'), fcntl.LOCK_EX | fcntl.LOCK_NB); print('got')\\nexcept OSError: print('blocked')"
            print(subprocess.run([sys.executable, '-c', child, sys.argv[1]], capture_output=True, text=True).stdout.strip())
            """
        XCTAssertEqual(Shell.check("python3 - '\(lock)' <<'EOF'\n\(fcntl)\nEOF"), "blocked\n")
        XCTAssertTrue(Shell.check("df '\(fixture.mountpoint)'").contains(fixture.mountpoint))
    }

    func testMoveAcrossContainers() throws {
        fixture.stop()
        try fixture.addContainer(Container(id: ContainerID("com.example.notes"), displayName: "Notes", isPublic: true))
        try fixture.start()
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.path("Notes")))
        Shell.check("echo moving > '\(fixture.path("doc.txt"))'")
        fixture.waitForUploads()
        let id = Shell.check("getfattr --only-values -n user.folio.id '\(fixture.path("doc.txt"))'")
        Shell.check("mv '\(fixture.path("doc.txt"))' '\(fixture.path("Notes/doc.txt"))'")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.container '\(fixture.path("Notes/doc.txt"))'"), "com.example.notes")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.id '\(fixture.path("Notes/doc.txt"))'"), id)
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("doc.txt", container: "com.example.notes"), "moving\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.remotePath("doc.txt")))
        XCTAssertTrue(Shell.run("rmdir '\(fixture.path("Notes"))'").stderr.contains("Operation not permitted"))
        XCTAssertTrue(Shell.run("mv '\(fixture.path("Notes"))' '\(fixture.path("Renamed"))'").stderr.contains("Operation not permitted"))
    }
}
