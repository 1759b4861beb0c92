import Foundation
import XCTest

/// Sparse files stay sparse: in the content cache, on the remote, in a download; `fallocate` and
/// `SEEK_DATA`/`SEEK_HOLE` through the mount.
class SparseFileTests: MountTestCase {
    /// Kilobytes `du` counts for `path` (what it occupies on disk).
    private func diskKiB(_ path: String) -> Int {
        Int(Shell.check("du -sk '\(path)' | cut -f1").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Runs a python3 script with the mountpoint as its argument; it prints `ok` when its checks pass.
    private func python(
        _ script: String, _ argument: String? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        let result = Shell.run("python3 - '\(argument ?? fixture.mountpoint)' <<'EOF'\n\(script)\nEOF", timeout: 120)
        XCTAssertEqual(result.stdout, "ok\n", result.stderr, file: file, line: line)
    }

    /// Checks that `path` is 10 GiB of zeros (read at its start, middle and end).
    private let zerosCheck = """
        import os, sys
        p = sys.argv[1]
        assert os.stat(p).st_size == 10 << 30, os.stat(p).st_size
        with open(p, 'rb') as f:
            for at in (0, 5 << 30, (10 << 30) - (1 << 20)):
                f.seek(at)
                assert f.read(1 << 20) == bytes(1 << 20), at
            f.seek(10 << 30)
            assert f.read(10) == b''
        print('ok')
        """

    func testTruncatedFileStaysSparseInCacheOnTheRemoteAndInADownload() throws {
        try skipOverWebDAV("only a folder keeps the upload's holes: over HTTP the server gets and writes all 10 GiB")
        let file = fixture.path("big.img")
        Shell.check("truncate -s 10G '\(file)'")
        XCTAssertLessThan(diskKiB(file), 1024, "the file takes its whole size on the mount")
        python(zerosCheck, file)
        fixture.waitForUploads(timeout: 120)
        XCTAssertLessThan(diskKiB(fixture.state), 64 << 10, "the state folder holds the holes as data")
        let remote = fixture.remotePath("big.img")
        XCTAssertEqual(Shell.check("stat -c %s '\(remote)'"), "\(10 << 30)\n")
        XCTAssertLessThan(diskKiB(remote), 1024, "the remote's copy takes its whole size")

        // Another device downloads it: the holes stay holes in its content cache too.
        let device = try MountFixture(extraArguments: ["--poll-interval", "600"], remote: fixture.remote)
        addTeardownBlock { device.tearDown() }
        try device.start()
        python(zerosCheck, device.path("big.img"))
        // Reads wait only for their bytes (issue 14) and fetch only those (issue 19); `folio download` brings the
        // rest.
        let download = device.folio("download '\(device.path("big.img"))'", timeout: 300)
        XCTAssertEqual(download.status, 0, download.stderr)
        XCTAssertEqual(
            Shell.run("getfattr --only-values -n user.folio.state '\(device.path("big.img"))'").stdout, "materialized")
        XCTAssertLessThan(diskKiB(device.path("big.img")), 1024, "the downloaded file takes its whole size")
        XCTAssertLessThan(diskKiB(device.state), 64 << 10, "the download filled the holes")
    }

    func testDataAtBothEndsOfAHoleIsKeptThroughCopiesAndUploads() throws {
        try skipOverWebDAV("only a folder keeps the upload's holes: the server writes the zeros it is sent")
        let script = """
            import os, sys
            p = os.path.join(sys.argv[1], 'ends.bin')
            fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
            os.pwrite(fd, b'head', 0)
            os.pwrite(fd, b'tail', 1 << 30)
            os.close(fd)
            # A second session changes the committed version: its copy must keep the hole.
            fd = os.open(p, os.O_WRONLY)
            os.pwrite(fd, b'HEAD', 0)
            os.close(fd)
            with open(p, 'rb') as f:
                assert f.read(4) == b'HEAD'
                f.seek(1 << 29)
                assert f.read(4096) == bytes(4096)
                f.seek(1 << 30)
                assert f.read() == b'tail'
            print('ok')
            """
        python(script)
        let file = fixture.path("ends.bin")
        XCTAssertEqual(Shell.check("stat -c %s '\(file)'"), "\((1 << 30) + 4)\n")
        XCTAssertLessThan(diskKiB(file), 1024)
        fixture.waitForUploads(timeout: 120)
        XCTAssertLessThan(diskKiB(fixture.state), 64 << 10, "a copy of the version filled the hole")
        let remote = fixture.remotePath("ends.bin")
        XCTAssertLessThan(diskKiB(remote), 1024, "the remote's copy filled the hole")
        XCTAssertEqual(Shell.check("head -c 4 '\(remote)'; tail -c 4 '\(remote)'"), "HEADtail")
    }

    func testFallocateAllocatesKeepsTheSizeAndPunchesHoles() throws {
        try skipOverWebDAV("only a folder keeps the upload's holes: the server writes the zeros it is sent")
        let script = """
            import os, sys
            d = sys.argv[1]
            p = os.path.join(d, 'alloc.bin')
            fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
            os.posix_fallocate(fd, 0, 1 << 20)
            st = os.fstat(fd)
            assert st.st_size == 1 << 20, st.st_size
            assert st.st_blocks * 512 >= 1 << 20, st.st_blocks
            assert os.pread(fd, 1 << 20, 0) == bytes(1 << 20)
            os.close(fd)
            print('ok')
            """
        python(script)
        let alloc = fixture.path("alloc.bin")
        // --keep-size: blocks past the end, the size stays.
        Shell.check("fallocate --keep-size -o 1MiB -l 2MiB '\(alloc)'")
        XCTAssertEqual(Shell.check("stat -c %s '\(alloc)'"), "\(1 << 20)\n")
        XCTAssertGreaterThanOrEqual(diskKiB(alloc), 3 << 10, "--keep-size allocated nothing")

        // --punch-hole (keeps the size): the range reads as zeros and takes no space.
        let punched = fixture.path("punched.bin")
        Shell.check("head -c 4194304 /dev/urandom | tr '\\000' x > '\(punched)'")
        let before = diskKiB(punched)
        Shell.check("fallocate --punch-hole -o 1MiB -l 2MiB '\(punched)'")
        XCTAssertEqual(Shell.check("stat -c %s '\(punched)'"), "\(4 << 20)\n")
        XCTAssertLessThanOrEqual(diskKiB(punched), before - (2 << 10), "the punched range still takes space")
        XCTAssertEqual(Shell.check("tail -c +1048577 '\(punched)' | head -c 2097152 | tr -d '\\000' | wc -c"), "0\n")
        XCTAssertEqual(Shell.check("head -c 1048576 '\(punched)' | tr -d '\\000' | wc -c"), "1048576\n")

        // A mode Folio does not support is refused as Linux does for a filesystem without it.
        let collapse = Shell.run("fallocate --collapse-range -o 0 -l 4096 '\(punched)'")
        XCTAssertNotEqual(collapse.status, 0)
        XCTAssertTrue(collapse.stderr.contains("not supported"), collapse.stderr)

        // Committed and uploaded like any write.
        fixture.waitForUploads()
        Shell.check("cmp '\(punched)' '\(fixture.remotePath("punched.bin"))'")
        XCTAssertEqual(Shell.check("stat -c %s '\(fixture.remotePath("alloc.bin"))'"), "\(1 << 20)\n")
        XCTAssertLessThanOrEqual(diskKiB(fixture.remotePath("punched.bin")), before - (2 << 10))
    }

    func testSeekDataAndHoleSeeTheHolesAndCopiesStaySparse() throws {
        let script = """
            import os, sys
            p = os.path.join(sys.argv[1], 'holes.bin')
            fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
            os.pwrite(fd, b'x' * 4096, 1 << 26)
            os.ftruncate(fd, (1 << 26) + (1 << 20))
            for handle in (fd, os.open(p, os.O_RDONLY)):
                assert os.lseek(handle, 0, os.SEEK_DATA) == 1 << 26, os.lseek(handle, 0, os.SEEK_DATA)
                assert os.lseek(handle, 0, os.SEEK_HOLE) == 0
                assert os.lseek(handle, 1 << 26, os.SEEK_HOLE) == (1 << 26) + 4096
                try:
                    os.lseek(handle, (1 << 26) + 8192, os.SEEK_DATA)
                    raise AssertionError('data after the last data')
                except OSError as e:
                    assert e.errno == 6, e  # ENXIO
            os.close(fd)
            print('ok')
            """
        python(script)
        let copy = fixture.root + "/copy.bin"
        Shell.check("cp --sparse=auto '\(fixture.path("holes.bin"))' '\(copy)'")
        Shell.check("cmp '\(fixture.path("holes.bin"))' '\(copy)'")
        XCTAssertLessThan(diskKiB(copy), 1024, "cp did not see the holes")
    }
}
