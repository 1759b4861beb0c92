import Foundation
import XCTest

/// Issue 19 "Partial reads" (File Provider's `fetchPartialContents`): opening a placeholder fetches nothing; a read
/// fetches what it needs (in pieces of 64 KiB) plus a readahead that grows only while the reader goes on
/// sequentially; what was fetched stays here (`partial`) after the last close, across a restart, until an eviction
/// or a new version; never a range fetched twice while it is here.
///
/// What was fetched is counted from the provider calls the daemon logs (`fetching bytes A..<B of ID`), not by timing.
final class PartialReadTests: MountTestCase {
    /// 32 MiB of random bytes behind a link of 50 ms per call and 20 MiB/s (the remote's simulated network).
    static let size = 32 << 20

    override func prepareRemote() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("""
            set -e
            head -c \(Self.size) /dev/urandom > '\(drive)/movie.bin'
            mkdir -p '\(drive)/Docs'
            for i in 1 2 3 4 5 6; do head -c $((3 << 20)) /dev/urandom > "\(drive)/Docs/blob$i"; done
            printf '%%PDF-1.4\\n' > '\(drive)/Docs/report'; head -c $((2 << 20)) /dev/urandom >> '\(drive)/Docs/report'
            printf '\\x89PNG\\r\\n\\x1a\\n' > '\(drive)/Docs/picture'; head -c $((2 << 20)) /dev/urandom >> '\(drive)/Docs/picture'
            """, timeout: 60)
        try fixture.simulateNetwork(
            #"{"latencyMilliseconds": 50, "bandwidthBytesPerSecond": \#(20 << 20), "errorRate": 0}"#)
    }

    private var movie: String { fixture.path("movie.bin") }

    private func state(_ path: String) -> String { ExtendedAttributes.value("user.folio.state", of: path) ?? "" }

    private func progress(_ path: String) -> String { ExtendedAttributes.value("user.folio.progress", of: path) ?? "" }

    /// The byte ranges the provider was asked for and that were not cancelled (a reader that closes cancels the
    /// fetches nobody waits for: their bytes never count as here), per item id, from the daemon's log.
    private func fetches() -> [String: [Range<Int64>]] {
        var ranges: [String: [Range<Int64>]] = [:]
        func parse(_ line: Substring, after marker: String) -> (String, Range<Int64>)? {
            guard let start = line.range(of: marker) else { return nil }
            let words = line[start.upperBound...].split(separator: " ")
            let bounds = words.first?.components(separatedBy: "..<").compactMap { Int64($0) } ?? []
            guard bounds.count == 2, words.count >= 3 else { return nil }
            return (String(words[2]), bounds[0]..<bounds[1])
        }
        for line in fixture.log.split(separator: "\n") {
            if let (id, range) = parse(line, after: "fetching bytes ") {
                ranges[id, default: []].append(range)
            } else if let (id, range) = parse(line, after: "fetch of bytes "), line.hasSuffix("cancelled"),
                      let index = ranges[id]?.lastIndex(of: range) {
                ranges[id]?.remove(at: index)
            }
        }
        return ranges
    }

    private func id(_ path: String) -> String { ExtendedAttributes.value("user.folio.id", of: path) ?? "?" }

    /// Bytes fetched for the item at `path`.
    private func fetched(_ path: String) -> Int64 {
        (fetches()[id(path)] ?? []).reduce(0) { $0 + Int64($1.count) }
    }

    /// Whether some byte of the item at `path` was fetched twice.
    private func fetchedTwice(_ path: String) -> Bool {
        let ranges = (fetches()[id(path)] ?? []).sorted { $0.lowerBound < $1.lowerBound }
        return zip(ranges, ranges.dropFirst()).contains { $0.upperBound > $1.lowerBound }
    }

    private var cachedFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixture.state + "/content")) ?? []).filter { $0 != "empty" }
    }

    /// The MD5 of `count` blocks of 4 KiB at block `skip` of `path`.
    private func digest(_ path: String, skip: Int, count: Int = 1) -> String {
        Shell.check("set -o pipefail; dd if='\(path)' bs=4096 skip=\(skip) count=\(count) status=none | md5sum")
    }

    func testAnOpenFetchesNothingAndTypeSniffingFetchesAtMost64KiBPerFile() throws {
        // Opened and closed without a read (what file managers and `touch` do): nothing fetched, still a placeholder.
        Shell.check("python3 -c 'import sys; open(sys.argv[1], \"rb\").close()' '\(movie)'")
        XCTAssertEqual(fetched(movie), 0, "an open fetches nothing")
        XCTAssertEqual(state(movie), "placeholder")

        // What a file manager's type guessing reads: `gio` over the folder (it sniffs the documents without an
        // extension), and the first 4 KiB of two of them read by hand.
        let docs = fixture.path("Docs")
        let listed = Shell.check("gio list -a standard::content-type '\(docs)'", timeout: 60)
        XCTAssertTrue(listed.contains("report"), listed)
        XCTAssertEqual(Shell.check("head -c 4 '\(docs)/report'"), "%PDF")
        XCTAssertEqual(Shell.check("head -c 4096 '\(docs)/picture' | head -c 4 | od -An -tx1"), " 89 50 4e 47\n")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs)
        XCTAssertEqual(names.count, 8)
        for name in names {
            let path = docs + "/" + name
            XCTAssertLessThanOrEqual(fetched(path), 64 << 10, "\(name): \(fetches()[id(path)] ?? [])")
            XCTAssertFalse(fetchedTwice(path), name)
            if fetched(path) > 0 {
                XCTAssertEqual(state(path), "partial", name)
                XCTAssertEqual(progress(path), "\(fetched(path))/\(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0)", name)
            }
        }
        XCTAssertGreaterThan(fetched(docs + "/report"), 0, "`file` read the document")
    }

    func testRandomReadsFetchWhatTheyReadAndNothingTwiceAndItStaysAfterTheLastClose() throws {
        // Eight reads of 4 KiB far apart, each its own process (one open each).
        let blocks = [17, 1_000, 2_500, 4_000, 5_100, 6_000, 7_000, 8_190]
        for block in blocks {
            XCTAssertEqual(digest(movie, skip: block), digest(fixture.remotePath("movie.bin"), skip: block), "\(block)")
        }
        let afterFirst = fetched(movie)
        XCTAssertLessThanOrEqual(afterFirst, Int64(blocks.count) * (192 << 10), "random reads fetch what they read")
        XCTAssertGreaterThan(afterFirst, 0)
        XCTAssertFalse(fetchedTwice(movie))
        XCTAssertEqual(state(movie), "partial")
        XCTAssertEqual(progress(movie), "\(afterFirst)/\(Self.size)")
        let status = fixture.folio("status '\(fixture.mountpoint)'").stdout
        XCTAssertTrue(status.contains("partial 1"), status)

        // Read again by new opens: nothing is fetched again.
        for block in blocks {
            XCTAssertEqual(digest(movie, skip: block), digest(fixture.remotePath("movie.bin"), skip: block), "\(block)")
        }
        XCTAssertEqual(fetched(movie), afterFirst, "a range that is here is never fetched again")

        // After a restart too (the record of what is here is kept beside the bytes).
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(state(movie), "partial")
        XCTAssertEqual(progress(movie), "\(afterFirst)/\(Self.size)")
        let logBefore = fixture.log.count
        for block in blocks {
            XCTAssertEqual(digest(movie, skip: block), digest(fixture.remotePath("movie.bin"), skip: block), "\(block)")
        }
        XCTAssertFalse(fixture.log.dropFirst(logBefore).contains("fetching bytes"), "nothing fetched after the restart")

        // Evicted, the bytes go and the file is a placeholder again.
        let evicted = fixture.folio("evict '\(movie)'")
        XCTAssertEqual(evicted.status, 0, evicted.stderr)
        XCTAssertEqual(state(movie), "placeholder")
        XCTAssertEqual(progress(movie), "0/\(Self.size)")
        XCTAssertEqual(cachedFiles, [], "the partial file and its record are gone")
    }

    func testASequentialReaderGetsTheWholeFileFetchedOnceAndMaterialized() throws {
        let mounted = Shell.check("md5sum < '\(movie)'", timeout: 120)
        XCTAssertEqual(mounted, Shell.check("md5sum < '\(fixture.remotePath("movie.bin"))'"))
        XCTAssertEqual(state(movie), "materialized")
        XCTAssertEqual(fetched(movie), Int64(Self.size), "every byte fetched once: \(fetches()[id(movie)] ?? [])")
        XCTAssertFalse(fetchedTwice(movie))
        let first = fetches()[id(movie)]?.first
        XCTAssertEqual(first?.lowerBound, 0)
        XCTAssertLessThanOrEqual(first?.count ?? .max, 128 << 10, "the first read fetched what it read, not more")
    }

    func testAReaderThatStopsEarlyLeavesTheRestOnTheRemote() throws {
        // `head` reads 2 MiB sequentially and closes: the readahead stops with it. (The kernel's own readahead, 8 MiB
        // on a Folio mount, asks for up to that much beyond the reader; Folio adds a quarter of the run to it.)
        Shell.check("head -c $((2 << 20)) '\(movie)' > /dev/null")
        XCTAssertTrue(Shell.waitUntil(timeout: 20) { self.state(self.movie) == "partial" }, state(movie))
        let kept = fetched(movie)
        XCTAssertGreaterThanOrEqual(kept, 2 << 20)
        XCTAssertLessThanOrEqual(kept, 12 << 20, "the rest stays on the remote: \(fetches()[id(movie)] ?? [])")
        XCTAssertFalse(fetchedTwice(movie))
        // `cat` after it reads the rest and gets the remote's bytes.
        XCTAssertEqual(
            Shell.check("md5sum < '\(movie)'", timeout: 120), Shell.check("md5sum < '\(fixture.remotePath("movie.bin"))'"))
        XCTAssertEqual(state(movie), "materialized")
        XCTAssertFalse(fetchedTwice(movie), "what the first reader left is not fetched again")
    }

    func testKeptBytesOfAVersionTheRemoteReplacedAreNeverServed() throws {
        let remote = fixture.remotePath("movie.bin")
        XCTAssertEqual(digest(movie, skip: 100), digest(remote, skip: 100))
        XCTAssertEqual(state(movie), "partial")
        // Changed on the remote in place (the bytes kept here are of the old version).
        Shell.check("dd if=/dev/urandom of='\(remote)' bs=4096 seek=100 count=1 conv=notrunc status=none")
        let changed = digest(remote, skip: 100)
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { self.digest(self.movie, skip: 100) == changed },
            "the new version is read, never the kept bytes of the old one")
        XCTAssertTrue(
            Shell.waitUntil(timeout: 20) { self.cachedFiles.filter { $0.hasSuffix(".ranges") }.count == 1 },
            "the old version's bytes went: \(cachedFiles)")
    }
}

/// Issue 19: the bytes of partial files count towards the cache limit, and the least recently used go first (the
/// file is a placeholder again); those of a file that is open stay.
final class PartialCacheLimitTests: MountTestCase {
    override var mountArguments: [String] { ["--cache-limit", "2560K"] }

    override func prepareRemote() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("for i in 1 2 3; do head -c $((8 << 20)) /dev/urandom > \"\(drive)/v$i.bin\"; done", timeout: 60)
    }

    private func state(_ name: String) -> String {
        ExtendedAttributes.value("user.folio.state", of: fixture.path(name)) ?? ""
    }

    /// Reads 64 KiB at 16 places 512 KiB apart (no kernel readahead): 1 MiB of the file is then here.
    private func sample(_ name: String) {
        Shell.check("""
            python3 -c '
            import os, sys
            fd = os.open(sys.argv[1], os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            for i in range(16): assert len(os.pread(fd, 65536, i * 524288)) == 65536
            os.close(fd)' '\(fixture.path(name))'
            """)
    }

    func testTheLeastRecentlyUsedPartialFileGoesFirst() throws {
        for name in ["v1.bin", "v2.bin", "v3.bin"] {
            sample(name)
            XCTAssertTrue(Shell.waitUntil(timeout: 10) { self.state(name) != "materializing" }, name)
        }
        // 3 MiB of partial files, limit 2.5 MiB: the oldest goes.
        XCTAssertTrue(
            Shell.waitUntil(timeout: 30) { self.state("v1.bin") == "placeholder" }, fixture.log.suffix(2000).description)
        XCTAssertEqual(state("v2.bin"), "partial")
        XCTAssertEqual(state("v3.bin"), "partial")
        // (The line is logged just after the state changed.)
        XCTAssertTrue(
            Shell.waitUntil(timeout: 10) { self.fixture.log.contains("cache limit: evicted 1 files") },
            fixture.log.suffix(2000).description)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: fixture.state + "/content")) ?? []
        XCTAssertEqual(files.filter { $0.hasSuffix(".ranges") }.count, 2, "\(files)")
        // What went is fetched again when read.
        XCTAssertEqual(
            Shell.check("dd if='\(fixture.path("v1.bin"))' bs=65536 count=1 status=none | md5sum"),
            Shell.check("dd if='\(fixture.remotePath("v1.bin"))' bs=65536 count=1 status=none | md5sum"))
    }
}
