import Foundation
import XCTest

/// DESIGN.md §2 "Coordination": snapshot readers, one writer session per item, commits at close and fsync.
class CoordinationTests: MountTestCase {
    override var mountArguments: [String] { ["--write-wait", "2"] }

    /// A reader loop against a writer rewriting a 32 MiB file: every read from open to close must equal
    /// exactly one committed version (all bytes of one version number, full length).
    func testReadersSeeOnlyCommittedVersions() throws {
        let file = fixture.path("big.bin")
        let script = """
            import os, sys, time, multiprocessing
            path = sys.argv[1]
            size = 32 << 20
            def write_version(k):
                with open(path, 'wb') as f:
                    block = bytes([k]) * (1 << 20)
                    for _ in range(size >> 20):
                        f.write(block)
            write_version(1)
            def writer(done):
                for k in range(2, 12):
                    write_version(k)
                done.set()
            def reader(done, result):
                seen, reads, bad = set(), 0, []
                while not done.is_set() or reads < 3:
                    with open(path, 'rb') as f:
                        data = f.read()
                    reads += 1
                    first = data[0] if data else -1
                    if len(data) != size or data.count(first) != len(data):
                        bad.append((len(data), first, data.count(first)))
                    seen.add(first)
                result.put((reads, len(seen), bad[:5]))
            done = multiprocessing.Event()
            result = multiprocessing.Queue()
            readers = [multiprocessing.Process(target=reader, args=(done, result)) for _ in range(2)]
            for r in readers: r.start()
            writer(done)
            for r in readers: r.join()
            totals = [result.get() for _ in readers]
            print(totals)
            assert all(not bad for _, _, bad in totals), totals
            assert sum(v for _, v, _ in totals) >= 3, 'readers should have seen several versions: %r' % totals
            with open(path, 'rb') as f:
                assert f.read() == bytes([11]) * size
            print('ok')
            """
        let output = Shell.check("python3 - '\(file)' <<'EOF'\n\(script)\nEOF", timeout: 300)
        XCTAssertTrue(output.hasSuffix("ok\n"), output)
    }

    /// A reader that opened before a writer keeps reading its version to the end, while the writer truncates
    /// and rewrites the file (and after the writer committed).
    func testOpenReaderKeepsItsSnapshot() throws {
        let file = fixture.path("snap.txt")
        let script = """
            import os, sys
            path = sys.argv[1]
            with open(path, 'w') as f: f.write('old version ' * 10000)
            r = open(path, 'rb')
            head = r.read(100)
            with open(path, 'w') as w:
                w.write('NEW')
                w.flush()
                rest_during = r.read(1000)
            rest_after = r.read()
            data = head + rest_during + rest_after
            assert data == b'old version ' * 10000, (len(data), data[:50])
            r.close()
            assert open(path).read() == 'NEW'
            print('ok')
            """
        XCTAssertEqual(Shell.check("python3 - '\(file)' <<'EOF'\n\(script)\nEOF"), "ok\n")
    }

    /// Two processes appending in open/append/close loops: no update is lost.
    func testConcurrentAppendersLoseNothing() throws {
        let file = fixture.path("log.txt")
        Shell.check("""
            set -e
            : > '\(file)'
            for w in a b; do
              ( for i in $(seq 1 150); do echo "$w $i" >> '\(file)'; done ) &
            done
            wait
            """, timeout: 180)
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 300)
        XCTAssertEqual(Set(lines).count, 300)
        fixture.waitForUploads()
        XCTAssertEqual(try String(contentsOfFile: fixture.remotePath("log.txt"), encoding: .utf8).split(separator: "\n").count, 300)
    }

    /// A second writer waits for the first; after `--write-wait` it fails with EBUSY. Opens from the same
    /// process join the session.
    func testSecondWriterWaitsThenBusy() throws {
        let file = fixture.path("locked.txt")
        let script = """
            import os, sys, time, subprocess, errno
            path = sys.argv[1]
            a = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(a, b'first')
            b = os.open(path, os.O_WRONLY)            # same process: joins the session
            os.write(b, b'FIRST')
            child = '''
            import os, sys, errno
            try:
                os.open(sys.argv[1], os.O_WRONLY)
                print('opened')
            except OSError as e:
                print(errno.errorcode[e.errno])
            '''
            start = time.monotonic()
            out = subprocess.run([sys.executable, '-c', child, path], capture_output=True, text=True).stdout.strip()
            waited = time.monotonic() - start
            assert out == 'EBUSY', out
            assert waited >= 1.5, waited                 # it waited for the session (--write-wait 2)
            # A reader from another process is not blocked and sees the last committed version (empty).
            out = subprocess.run(['cat', path], capture_output=True).stdout
            assert out == b'', out
            # Released within the wait: the second writer gets in.
            proc = subprocess.Popen([sys.executable, '-c', child, path], stdout=subprocess.PIPE, text=True)
            time.sleep(0.3)
            os.close(a); os.close(b)
            assert proc.communicate()[0].strip() == 'opened'
            assert open(path, 'rb').read() == b'FIRST'
            print('ok')
            """
        XCTAssertEqual(Shell.check("python3 - '\(file)' <<'EOF'\n\(script)\nEOF", timeout: 60), "ok\n")
    }

    /// `fsync` commits: the version is visible to new readers while the writer keeps the file open.
    func testFsyncCommits() throws {
        let file = fixture.path("sync.txt")
        let script = """
            import os, sys, subprocess
            path = sys.argv[1]
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, b'committed')
            assert subprocess.run(['cat', path], capture_output=True).stdout == b''
            os.fsync(fd)
            assert subprocess.run(['cat', path], capture_output=True).stdout == b'committed'
            os.write(fd, b' and more')
            assert subprocess.run(['cat', path], capture_output=True).stdout == b'committed'
            os.close(fd)
            assert open(path, 'rb').read() == b'committed and more'
            print('ok')
            """
        XCTAssertEqual(Shell.check("python3 - '\(file)' <<'EOF'\n\(script)\nEOF"), "ok\n")
    }
}
