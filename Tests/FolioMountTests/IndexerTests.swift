import FolioCore
import Foundation
import XCTest

/// Issue 19 "Indexers": what the desktop's indexer gets from a mount of placeholders, tried with the real Tracker 3
/// (`tracker-miner-fs-3`, which starts `tracker-extract-3`) indexing the mount in a private D-Bus session.
///
/// Folio's policy: indexers never download (``FileSystemConfiguration/indexers``). They get every name and a type
/// for each (from the name; a sniff of a placeholder's first bytes is refused), and the text of what is already
/// here; a placeholder's open fails for them with `EAGAIN`. Fetches are counted from the daemon's log (`fetching
/// bytes`, one line per provider call) and with `user.folio.state`.
class IndexerTestCase: MountTestCase {
    override var mountArguments: [String] { ["--poll-interval", "600"] + indexerArguments }

    /// Extra `folio mount` arguments about indexers.
    var indexerArguments: [String] { [] }

    static let miner = "/usr/libexec/tracker-miner-fs-3"

    override func setUpWithError() throws {
        try XCTSkipUnless(
            FileManager.default.isExecutableFile(atPath: Self.miner)
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-run-session"),
            "needs Tracker 3 (Debian tracker-miner-fs, tracker-extract, tracker) and dbus, installed by scripts/bootstrap")
        try super.setUpWithError()
    }

    override func prepareRemote() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("""
            set -e
            mkdir -p '\(drive)/Docs' '\(drive)/Pictures'
            for i in 1 2 3; do echo "remote words giraffe$i" > "\(drive)/Docs/remote$i.txt"; done
            head -c 300000 /dev/urandom > '\(drive)/Docs/blob'
            """)
        for index in 1...3 {
            let png = PNGEncoder.encode(width: 40 + index, height: 30) { x, y in (UInt8(x), UInt8(y), 3) }
            try Data(png).write(to: URL(fileURLWithPath: "\(drive)/Pictures/p\(index).png"))
        }
    }

    /// What Tracker indexed: each file (by its path in the mount) with its size, its type, and the text it
    /// extracted.
    struct Index {
        var sizes: [String: Int] = [:]
        var types: [String: String] = [:]
        var texts: [String: String] = [:]
    }

    /// Runs Tracker 3 over the mount until it has extracted the text of each of `extracted` (paths in the mount)
    /// and says it is idle (at most 120 s), and returns what it indexed.
    func runTracker(until extracted: [String]) throws -> Index {
        let home = fixture.root + "/tracker-home"
        try FileManager.default.createDirectory(atPath: home + "/config/glib-2.0/settings", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "/var/tmp", withIntermediateDirectories: true)
        // Only the mount; GSettings from a key file (no dconf here). Tracker skips configured folders under the
        // temporary folder, and the fixture's mount is under /tmp: Tracker is given another one.
        try """
            [org/freedesktop/tracker/miner/files]
            index-recursive-directories=['\(fixture.mountpoint)']
            index-single-directories=@as []
            index-applications=false
            """.write(toFile: home + "/config/glib-2.0/settings/keyfile", atomically: true, encoding: .utf8)
        let wanted = extracted.map { "'file://\(fixture.mountpoint)/\($0)'" }.joined(separator: " ")
        let script = """
            \(Self.miner) --initial-sleep 0 > '\(home)/miner.log' 2>&1 &
            miner=$!
            q() { tracker3 sparql --dbus-service org.freedesktop.Tracker3.Miner.Files -q "$1"; }
            texts() { q 'SELECT ?u ?c WHERE { ?f nie:url ?u ; nie:interpretedAs ?i . ?i nie:plainTextContent ?c }'; }
            for i in $(seq 1 240); do
                sleep 0.5
                tracker3 status 2>/dev/null | grep -q 'All data miners are idle' || continue
                found=$(texts 2>/dev/null)
                missing=0
                for url in \(wanted); do echo "$found" | grep -qF "$url, " || missing=1; done
                [ $missing = 0 ] && break
            done
            echo '--- types'
            q 'SELECT ?u ?t WHERE { ?f a nfo:FileDataObject ; nie:url ?u ; nie:interpretedAs ?i . ?i nie:mimeType ?t }'
            echo '--- names'
            q 'SELECT ?u ?s WHERE { ?f a nfo:FileDataObject ; nie:url ?u ; nfo:fileSize ?s }'
            echo '--- texts'
            texts
            kill $miner; wait $miner
            """
        let result = Shell.run(
            "dbus-run-session -- bash -c \(Self.quoted(script))", timeout: 150,
            environment: [
                "HOME": home, "XDG_CONFIG_HOME": home + "/config", "XDG_CACHE_HOME": home + "/cache",
                "XDG_DATA_HOME": home + "/data", "GSETTINGS_BACKEND": "keyfile", "TMPDIR": "/var/tmp",
            ])
        var index = Index()
        var section = ""
        for line in result.stdout.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("--- ") {
                section = String(text.dropFirst(4))
                continue
            }
            guard text.hasPrefix("file://"), let comma = text.range(of: ", ") else { continue }
            let url = String(text[..<comma.lowerBound])
            let relative = url.replacingOccurrences(of: "file://" + fixture.mountpoint + "/", with: "")
            let value = String(text[comma.upperBound...])
            switch section {
            case "types": index.types[relative] = value
            case "names": index.sizes[relative] = Int(value) ?? -1
            default: index.texts[relative] = value
            }
        }
        XCTAssertFalse(index.sizes.isEmpty, "Tracker indexed nothing: \(result.stdout)\n\(result.stderr)")
        return index
    }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// The provider calls that fetched bytes, from the daemon's log.
    var fetches: Int { fixture.log.components(separatedBy: "fetching bytes ").count - 1 }

    static let placeholders = [
        "Docs/remote1.txt", "Docs/remote2.txt", "Docs/remote3.txt", "Docs/blob", "Pictures/p1.png",
        "Pictures/p2.png", "Pictures/p3.png",
    ]

}

/// Tracker over a mount with Folio's policy (the default).
final class IndexerTests: IndexerTestCase {
    func testTrackerIndexesNamesSizesAndLocalTextWithoutDownloadingAByte() throws {
        Shell.check("echo 'local words zebracorn' > '\(fixture.path("Docs/local.txt"))'")
        fixture.waitForUploads()
        let index = try runTracker(until: ["Docs/local.txt"])
        XCTAssertEqual(fetches, 0, "bytes were fetched for Tracker; log:\n\(fixture.log.suffix(3000))")
        for path in Self.placeholders {
            XCTAssertEqual(ExtendedAttributes.value("user.folio.state", of: fixture.path(path)), "placeholder", path)
        }
        // Every file is in the index with its name and size; what is here has its type and its text too.
        // (Tracker's extractor, refused a placeholder, drops the type the crawler had given it from its name.)
        for path in Self.placeholders + ["Docs/local.txt"] {
            XCTAssertNotNil(index.sizes[path], "\(path) is not indexed: \(index.sizes.keys.sorted())")
        }
        XCTAssertEqual(index.sizes["Docs/blob"], 300_000)
        XCTAssertEqual(index.types["Docs/local.txt"], "text/plain")
        XCTAssertEqual(index.texts["Docs/local.txt"]?.contains("zebracorn"), true, "\(index.texts)")
        for path in Self.placeholders {
            XCTAssertNil(index.texts[path], "text of \(path): it would have been downloaded")
        }
    }
}

/// The same run with the policy off (`--indexers ''`): what Tracker fetches when it is let (the issue's table:
/// everything), so the test above shows a difference Folio makes, not one Tracker makes by itself.
final class IndexerWithoutPolicyTests: IndexerTestCase {
    override var indexerArguments: [String] { ["--indexers", ""] }

    func testWithoutThePolicyTrackerDownloadsWhatItIndexes() throws {
        let index = try runTracker(until: ["Docs/remote1.txt", "Docs/remote2.txt", "Docs/remote3.txt"])
        XCTAssertGreaterThan(fetches, 0)
        // The texts it extracted were downloaded whole; the rest had bytes fetched (sniffed, or extracted).
        let fetched = Self.placeholders.filter {
            ExtendedAttributes.value("user.folio.state", of: fixture.path($0)) != "placeholder"
        }
        for path in ["Docs/remote1.txt", "Docs/remote2.txt", "Docs/remote3.txt"] {
            XCTAssertEqual(ExtendedAttributes.value("user.folio.state", of: fixture.path(path)), "materialized", path)
        }
        XCTAssertGreaterThanOrEqual(fetched.count, 4, "Tracker fetched these: \(fetched); texts: \(index.texts)")
        XCTAssertEqual(index.texts["Docs/remote1.txt"]?.contains("giraffe1"), true, "\(index.texts)")
    }
}

/// The policy itself, without Tracker: a program named as an indexer gets `EAGAIN` for a placeholder and reads
/// what is here; the same program under another name downloads.
final class IndexerPolicyTests: MountTestCase {
    override func prepareRemote() throws {
        let drive = fixture.remoteFolder + "/com.folio.drive"
        Shell.check("echo 'far away' > '\(drive)/remote.txt'")
    }

    func testAProgramNamedAsAnIndexerNeverDownloads() throws {
        let bin = fixture.root + "/bin"
        Shell.check("mkdir -p '\(bin)' && cp /bin/cat '\(bin)/tracker-extract-3' && cp /bin/cat '\(bin)/reader'")
        Shell.check("echo 'near' > '\(fixture.path("local.txt"))'")
        let refused = Shell.run("'\(bin)/tracker-extract-3' '\(fixture.path("remote.txt"))'")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("Resource temporarily unavailable"), refused.stderr)
        XCTAssertEqual(ExtendedAttributes.value("user.folio.state", of: fixture.path("remote.txt")), "placeholder")
        XCTAssertEqual(Shell.check("'\(bin)/tracker-extract-3' '\(fixture.path("local.txt"))'"), "near\n")
        XCTAssertEqual(Shell.check("'\(bin)/reader' '\(fixture.path("remote.txt"))'"), "far away\n")
        XCTAssertEqual(ExtendedAttributes.value("user.folio.state", of: fixture.path("remote.txt")), "materialized")
        XCTAssertTrue(fixture.log.contains("tracker-extract"), "the refusal is logged")
    }
}
