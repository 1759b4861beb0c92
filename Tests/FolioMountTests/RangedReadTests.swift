import Foundation
import XCTest

/// Issue 14 "Ranged materialization": a read of a big placeholder waits only for its own bytes while the rest
/// arrives in the background over a slow link; a `kill -9` mid-download resumes from what was fetched and
/// durable (never serving bytes that were not); a failed range fails its read with `EIO` and is fetched again.
final class RangedReadTests: MountTestCase {
    /// The placeholder: 64 MiB of random bytes, 16 s of download at the simulated 4 MiB/s.
    static let size = 64 << 20

    override func prepareRemote() throws {
        Shell.check("head -c \(Self.size) /dev/urandom > '\(fixture.remotePath("big.bin"))'", timeout: 60)
        try slowLink()
    }

    /// The simulated link: 20 ms per call, 4 MiB/s (the override file of the remote).
    private func slowLink(errorRate: Double = 0) throws {
        try fixture.simulateNetwork(
            #"{"latencyMilliseconds": 20, "bandwidthBytesPerSecond": \#(4 << 20), "errorRate": \#(errorRate)}"#)
    }

    private var big: String { fixture.path("big.bin") }
    private var remoteBig: String { fixture.remotePath("big.bin") }

    /// `user.folio.progress` as (done, total).
    private func progress() -> (done: Int, total: Int)? {
        let parts = (ExtendedAttributes.value("user.folio.progress", of: big) ?? "").split(separator: "/")
        guard parts.count == 2, let done = Int(parts[0]), let total = Int(parts[1]) else { return nil }
        return (done, total)
    }

    private func state() -> String { ExtendedAttributes.value("user.folio.state", of: big) ?? "" }

    /// The MD5 of `count` blocks of 4 KiB at block `skip` of `path`, read with `dd` (one process per read).
    private func ddDigest(_ path: String, skip: Int, count: Int = 1) -> CommandResult {
        Shell.run("set -o pipefail; dd if='\(path)' bs=4096 skip=\(skip) count=\(count) status=none | md5sum")
    }

    func testReadsReturnTheRightBytesWhileTheRestIsStillArriving() throws {
        // One process reads at scattered offsets (seeded) and compares with the remote's bytes at once; the
        // progress it sees meanwhile shows the file is not all here.
        let script = """
            import os, sys, json, random
            mounted, remote = sys.argv[1], sys.argv[2]
            size = os.path.getsize(remote)
            rng = random.Random(14)
            wrong, progress = [], None
            with open(mounted, 'rb') as f, open(remote, 'rb') as r:
                for _ in range(12):
                    offset = rng.randrange(0, size - 70000)
                    length = rng.choice([1, 4096, 65536, 70000])
                    f.seek(offset); r.seek(offset)
                    if f.read(length) != r.read(length): wrong.append(offset)
                f.seek(size - 10); r.seek(size - 10)
                if f.read(100) != r.read(100): wrong.append(size - 10)
                progress = os.getxattr(mounted, 'user.folio.progress').decode()
                state = os.getxattr(mounted, 'user.folio.state').decode()
            print(json.dumps({'wrong': wrong, 'progress': progress, 'state': state}))
            """
        let output = Shell.check("python3 - '\(big)' '\(remoteBig)' <<'EOF'\n\(script)\nEOF", timeout: 120)
        let result = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] ?? [:]
        XCTAssertEqual(result["wrong"] as? [Int], [], "bytes read at these offsets differ from the remote's: \(output)")
        let parts = (result["progress"] as? String ?? "").split(separator: "/").compactMap { Int($0) }
        XCTAssertEqual(parts.count, 2, output)
        // Random reads fetch what they read (in pieces of 64 KiB), nothing more (issue 19).
        XCTAssertLessThanOrEqual(parts.first ?? Self.size, 13 * (192 << 10), "only what was read is fetched: \(output)")
        XCTAssertGreaterThan(parts.first ?? 0, 0, output)
        XCTAssertEqual(result["state"] as? String, "partial", output)

        // `tail -c 4096` and `dd skip=` at random offsets, each its own open.
        XCTAssertEqual(
            Shell.check("tail -c 4096 '\(big)' | md5sum"), Shell.check("tail -c 4096 '\(remoteBig)' | md5sum"))
        var random = SystemRandomNumberGenerator()
        for _ in 0..<6 {
            let block = Int.random(in: 0..<(Self.size / 4096 - 4), using: &random)
            let mounted = ddDigest(big, skip: block, count: 3)
            XCTAssertEqual(mounted.status, 0, mounted.stderr)
            XCTAssertEqual(mounted.stdout, ddDigest(remoteBig, skip: block, count: 3).stdout, "block \(block)")
        }

        // Read whole, it is the remote's file, and materialized.
        XCTAssertEqual(Shell.check("md5sum < '\(big)'", timeout: 120), Shell.check("md5sum < '\(remoteBig)'"))
        XCTAssertEqual(state(), "materialized")
    }

    func testConcurrentReadersOfOneRangeShareOneFetch() throws {
        // Two processes read, at once, the first and the last page of one chunk far ahead of the background (two
        // reads the kernel sends apart): one fetch of the chunk serves both.
        let chunk = 48 << 20
        let first = chunk / 4096
        let last = first + (1 << 20) / 4096 - 1
        let digests = Shell.check("""
            (dd if='\(big)' bs=4096 skip=\(first) count=1 status=none | md5sum > '\(fixture.root)/one' &
             dd if='\(big)' bs=4096 skip=\(last) count=1 status=none | md5sum > '\(fixture.root)/two' & wait)
            cat '\(fixture.root)/one' '\(fixture.root)/two'
            """)
        XCTAssertEqual(digests, ddDigest(remoteBig, skip: first).stdout + ddDigest(remoteBig, skip: last).stdout)
        let fetches = fixture.log.components(separatedBy: "\n").filter { $0.contains("fetching bytes \(chunk)..<") }
        XCTAssertEqual(fetches.count, 1, fetches.joined(separator: "\n"))
    }

    func testKillNineMidDownloadResumesFromWhatWasFetched() throws {
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat '\(big)' > /dev/null"]
        try reader.run()
        defer { if reader.isRunning { reader.terminate() } }
        XCTAssertTrue(
            Shell.waitUntil(timeout: 60) { (self.progress()?.done ?? 0) >= 12 << 20 },
            "the download should be under way: \(String(describing: progress()))")
        let sidecars = { () -> [String] in
            ((try? FileManager.default.contentsOfDirectory(atPath: self.fixture.state + "/content")) ?? [])
                .filter { $0.hasSuffix(".ranges") }
        }
        XCTAssertTrue(Shell.waitUntil(timeout: 20) { !sidecars().isEmpty }, "what was fetched is recorded")
        XCTAssertTrue(fixture.kill9())
        reader.terminate()
        reader.waitUntilExit()
        XCTAssertEqual(sidecars().count, 1)

        try fixture.start()
        XCTAssertEqual(state(), "partial", "what was recorded is here")
        // Read whole by one open, the resumed download gives the remote's bytes (where the dead daemon's file has
        // holes or bytes it had not recorded too).
        XCTAssertEqual(Shell.check("md5sum < '\(big)'", timeout: 120), Shell.check("md5sum < '\(remoteBig)'"))
        let resumed = fixture.log.components(separatedBy: "\n").first { $0.contains("resuming the download") }
        XCTAssertNotNil(resumed, "the restarted daemon resumes from the recorded ranges")
        let already = resumed.flatMap { line in
            line.components(separatedBy: ": ").last?.split(separator: " ").first.flatMap { Int($0) }
        } ?? 0
        XCTAssertGreaterThan(already, 0, resumed ?? "")
        XCTAssertEqual(state(), "materialized")
        XCTAssertEqual(sidecars(), [], "the record goes once the file is complete")
    }

    func testAFailedRangeFailsTheReadWithEIOAndIsFetchedAgain() throws {
        try slowLink(errorRate: 1)
        let failed = ddDigest(big, skip: 5000)
        XCTAssertNotEqual(failed.status, 0)
        XCTAssertTrue(failed.stderr.contains("Input/output error"), failed.stderr)
        XCTAssertTrue(Shell.waitUntil(timeout: 10) { self.state() == "placeholder" }, state())

        try slowLink()
        let again = ddDigest(big, skip: 5000)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.stdout, ddDigest(remoteBig, skip: 5000).stdout, "the failed range was fetched again")

        // The remote file changes in place while one open reads it: the bytes of the version it opened that
        // are here stay readable, the rest fails with EIO (never the other version's bytes, never zeros).
        let script = """
            import os, sys, subprocess
            mounted, remote = sys.argv[1], sys.argv[2]
            with open(mounted, 'rb') as f, open(remote, 'rb') as r:
                first = f.read(4096) == r.read(4096)
                subprocess.run(['dd', 'if=/dev/zero', 'of=' + remote, 'bs=4096', 'seek=14000', 'count=1',
                                'conv=notrunc', 'status=none'], check=True)
                f.seek(60 << 20)
                try:
                    f.read(4096)
                    late = 'read'
                except OSError as error:
                    late = error.strerror
            print(first, late)
            """
        let output = Shell.check("python3 - '\(big)' '\(remoteBig)' <<'EOF'\n\(script)\nEOF", timeout: 60)
        XCTAssertEqual(output, "True Input/output error\n")
        // `folio status` says why the read failed.
        let status = fixture.folio("status '\(fixture.mountpoint)'").stdout
        XCTAssertTrue(
            status.contains("READ:     big.bin: I/O error: the version being read is gone from the remote"), status)
        // Once the change is seen, a new open reads the new version.
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            self.ddDigest(self.big, skip: 14000).stdout == self.ddDigest(self.remoteBig, skip: 14000).stdout
        }, "a new open reads the new version")
        XCTAssertEqual(Shell.check("md5sum < '\(big)'", timeout: 120), Shell.check("md5sum < '\(remoteBig)'"))
    }
}
