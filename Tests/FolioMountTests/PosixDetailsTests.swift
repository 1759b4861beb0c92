import Foundation
import XCTest

/// The POSIX details DESIGN.md §2 "Errors" names: names Folio cannot store, errnos, link counts, device nodes,
/// and the blocks a file takes on this machine.
class PosixDetailsTests: MountTestCase {
    override var mountArguments: [String] { ["--allow-other"] }

    /// Runs a python script with the mountpoint as its first argument; returns its output.
    private func python(_ script: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let prelude = """
            import errno, os, socket, stat, sys
            d = sys.argv[1]
            def err(f):
                try:
                    f()
                    return 'ok'
                except OSError as e:
                    return errno.errorcode.get(e.errno, str(e))

            """
        let command = "python3 - '\(fixture.mountpoint)' <<'EOF'\n\(prelude)\(script)\nEOF"
        return Shell.check(command, file: file, line: line)
    }

    func testNamesThatAreNotUTF8AreRefusedNotMerged() throws {
        let output = python("""
            b = os.fsencode(d)
            def create(name, text):
                with open(os.path.join(b, name), 'wb') as f: f.write(text)
            with open(os.path.join(b, b'kept'), 'wb') as f: f.write(b'kept')
            def bind():
                s = socket.socket(socket.AF_UNIX)
                os.chdir(b)
                try: s.bind(b'sock\\xff')
                finally: s.close()
            results = [
                err(lambda: create(b'x\\xff', b'first')),
                err(lambda: create(b'x\\xfe', b'second')),
                err(lambda: os.mkdir(os.path.join(b, b'dir\\xff'))),
                err(lambda: os.symlink(b'target', os.path.join(b, b'link\\xff'))),
                err(lambda: os.symlink(b'target\\xff', os.path.join(b, b'link'))),
                err(lambda: os.mkfifo(os.path.join(b, b'fifo\\xff'))),
                err(lambda: os.mknod(os.path.join(b, b'node\\xff'), stat.S_IFREG | 0o644)),
                err(bind),
                err(lambda: os.rename(os.path.join(b, b'kept'), os.path.join(b, b'kept\\xff'))),
                err(lambda: os.stat(os.path.join(b, b'x\\xff'))),
                err(lambda: os.unlink(os.path.join(b, b'x\\xff'))),
                err(lambda: os.setxattr(os.path.join(b, b'kept'), b'user.\\xff', b'v')),
            ]
            print(' '.join(results))
            print(sorted(os.listdir(b)))
            print(open(os.path.join(b, b'kept'), 'rb').read().decode())
            """)
        XCTAssertEqual(output, """
            EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL EINVAL ENOENT ENOENT EINVAL
            [b'.Recents', b'.Tags', b'kept']
            kept

            """)
        // A name that is valid UTF-8 is kept exactly, on the remote too.
        Shell.check("printf café > '\(fixture.path("café"))'")
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("café"), "café")
        XCTAssertEqual(Shell.check("ls '\(fixture.remotePath(""))' | sort"), "café\nkept\n")
    }

    func testLongNamesAreTooLongForEveryOperation() throws {
        let output = python("""
            long = os.path.join(d, 'n' * 256)
            short = os.path.join(d, 'short')
            with open(short, 'w') as f: f.write('kept')
            os.mkdir(os.path.join(d, 'folder'))
            results = [
                err(lambda: os.stat(long)),
                err(lambda: os.lstat(long)),
                err(lambda: os.chmod(long, 0o600)),
                err(lambda: os.unlink(long)),
                err(lambda: os.rmdir(long)),
                err(lambda: os.rename(long, short)),
                err(lambda: os.rename(short, long)),
                err(lambda: os.mkdir(long)),
                err(lambda: open(long, 'w')),
                err(lambda: os.mkfifo(long)),
                err(lambda: os.mknod(long, stat.S_IFREG | 0o644)),
                err(lambda: os.mknod(long, stat.S_IFCHR | 0o600, os.makedev(1, 3))),
                err(lambda: os.symlink('short', long)),
                err(lambda: os.mkfifo(os.path.join(d, 'folder', 'f' * 256))),
            ]
            print(' '.join(results))
            print(sorted(os.listdir(d)), open(short).read())
            """)
        XCTAssertEqual(output, Array(repeating: "ENAMETOOLONG", count: 14).joined(separator: " ")
            + "\n['.Recents', '.Tags', 'folder', 'short'] kept\n")
    }

    func testTruncateOrWritePastTheLargestFileIsEFBIG() throws {
        let output = python("""
            p = os.path.join(d, 'big')
            with open(p, 'w') as f: f.write('content')
            results = [err(lambda: os.truncate(p, 1 << 62))]
            fd = os.open(p, os.O_RDWR)
            results.append(err(lambda: os.ftruncate(fd, 1 << 62)))
            results.append(err(lambda: os.pwrite(fd, b'x', 1 << 62)))
            os.pwrite(fd, b'C', 0)
            os.close(fd)
            print(' '.join(results), os.stat(p).st_size, open(p).read())
            """)
        XCTAssertEqual(output, "EFBIG EFBIG EFBIG 7 Content\n")
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("big"), "Content")
    }

    func testLinkCounts() throws {
        let output = python("""
            p = os.path.join(d, 'file')
            with open(p, 'w') as f: f.write('x')
            fd = os.open(p, os.O_RDONLY)
            before = os.fstat(fd).st_nlink
            os.unlink(p)
            after = os.fstat(fd).st_nlink
            os.close(fd)
            top = os.path.join(d, 'top')
            os.mkdir(top)
            counts = [os.stat(top).st_nlink]
            for name in ('a', 'b', 'c'): os.mkdir(os.path.join(top, name))
            with open(os.path.join(top, 'f'), 'w') as f: f.write('not a folder')
            os.symlink('a', os.path.join(top, 'l'))
            counts.append(os.stat(top).st_nlink)
            os.rmdir(os.path.join(top, 'a'))
            counts.append(os.stat(top).st_nlink)
            os.rename(os.path.join(top, 'b'), os.path.join(d, 'b'))
            counts.append(os.stat(top).st_nlink)
            folders = sum(1 for e in os.scandir(d) if e.is_dir(follow_symlinks=False))
            print(before, after, counts, os.stat(d).st_nlink == 2 + folders)
            """)
        XCTAssertEqual(output, "1 0 [2, 5, 4, 3] True\n")
    }

    /// A folder's link count follows the subfolders that come and go on the remote (the count is kept between
    /// changes of the tree's names, never past one).
    func testAFoldersLinkCountFollowsSubfoldersMadeAndRemovedOnTheRemote() throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: fixture.remotePath("counted/one"), withIntermediateDirectories: true)
        let folder = fixture.mountpoint + "/counted"
        func links() -> Int? { (try? manager.attributesOfItem(atPath: folder))?[.referenceCount] as? Int }
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { manager.fileExists(atPath: folder) }, "the folder shows")
        XCTAssertEqual(try manager.contentsOfDirectory(atPath: folder), ["one"])
        XCTAssertEqual(links(), 3)
        try manager.createDirectory(atPath: fixture.remotePath("counted/two"), withIntermediateDirectories: true)
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { links() == 4 }, "a subfolder made on the remote: \(String(describing: links()))")
        try manager.removeItem(atPath: fixture.remotePath("counted/one"))
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { links() == 3 }, "a subfolder removed on the remote: \(String(describing: links()))")
        XCTAssertEqual(try manager.contentsOfDirectory(atPath: folder), ["two"])
    }

    func testDeviceNodesAreLocalOnly() throws {
        Shell.check("mknod -m 644 '\(fixture.path("null"))' c 1 3 && mknod -m 640 '\(fixture.path("loop"))' b 7 0")
        let described = "stat -c '%F %t:%T %a' '\(fixture.path("null"))' '\(fixture.path("loop"))'"
        XCTAssertEqual(Shell.check(described), "character special file 1:3 644\nblock special file 7:0 640\n")
        Shell.check("echo z > '\(fixture.path("marker"))'")
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("marker"), "z\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.remotePath("null")), "never uploaded")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.remotePath("loop")))
        // A script goes on: the node can be renamed and removed like any item, and stays across remounts.
        Shell.check("mv '\(fixture.path("loop"))' '\(fixture.path("loop0"))'")
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(Shell.check("stat -c '%F %t:%T' '\(fixture.path("null"))' '\(fixture.path("loop0"))'"),
                       "character special file 1:3\nblock special file 7:0\n")
        Shell.check("rm '\(fixture.path("null"))' '\(fixture.path("loop0"))'")
        XCTAssertEqual(Shell.check("ls '\(fixture.mountpoint)'"), "marker\n")
        // Hard links stay refused.
        let link = Shell.run("ln '\(fixture.path("marker"))' '\(fixture.path("hard"))'")
        XCTAssertTrue(link.stderr.contains("Operation not permitted"), link.stderr)
    }
}
