import Foundation
import XCTest

/// Issue 13, point 1: two mounts of one remote (two devices) write one document at the same instant, many
/// rounds. Every round ends with both edits kept: the remote has one, and the device whose edit lost holds its
/// own as the current version, `conflicted`, with the remote's as a conflict version. Never a side that says
/// `materialized` while its content is not the remote's (an evict would drop the edit).
class TwoDeviceRaceTests: MountTestCase {
    /// The rounds: one document each.
    static let rounds = 200

    /// Both devices upload at once (no quiet period) and learn of the other's change by push.
    override var mountArguments: [String] { ["--upload-delay", "0"] }

    override func prepareRemote() throws {
        let folder = fixture.remoteFolder + "/com.folio.drive/race"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for round in 0..<Self.rounds {
            try "original \(round)\n".write(toFile: folder + "/doc-\(round).txt", atomically: false, encoding: .utf8)
        }
    }

    func testSimultaneousEditsOnTwoDevicesAlwaysKeepBothVersions() throws {
        let other = try MountFixture(extraArguments: mountArguments, remote: fixture.remote)
        addTeardownBlock { other.tearDown() }
        try other.start()

        // Each round: two threads, one per device, open the same document for writing, pass a barrier, and write
        // and close it at once (both opened before either closed: neither can have seen the other's edit).
        let writer = """
            import os, sys, threading
            here, there, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
            for i in range(rounds):
                barrier = threading.Barrier(2)
                def write(mount, text):
                    with open(os.path.join(mount, 'race', 'doc-%d.txt' % i), 'w') as f:
                        barrier.wait()
                        f.write(text)
                threads = [threading.Thread(target=write, args=(here, 'here %d\\n' % i)),
                           threading.Thread(target=write, args=(there, 'there %d, a longer edit\\n' % i))]
                for t in threads: t.start()
                for t in threads: t.join()
            print('written')
            """
        XCTAssertEqual(
            Shell.check(
                "python3 - '\(fixture.mountpoint)' '\(other.mountpoint)' \(Self.rounds) <<'EOF'\n\(writer)\nEOF",
                timeout: 600),
            "written\n")

        // Settled when every round is as it must end; rounds that are not are listed on failure.
        let checker = """
            import os, sys
            here, there, remote, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
            def side(mount, i):
                p = os.path.join(mount, 'race', 'doc-%d.txt' % i)
                state = os.getxattr(p, 'user.folio.state').decode()
                content = open(p).read()
                try:
                    listing = os.getxattr(p, 'user.folio.versions').decode()
                except OSError:
                    listing = ''
                versions = [open(line.split('\\t')[-1]).read() for line in listing.splitlines() if line]
                return state, content, versions
            bad = []
            for i in range(rounds):
                mine, theirs = 'here %d\\n' % i, 'there %d, a longer edit\\n' % i
                winner = open(os.path.join(remote, 'race', 'doc-%d.txt' % i)).read()
                sides = [side(here, i), side(there, i)]
                loser = theirs if winner == mine else mine
                ok = winner in (mine, theirs)
                for state, content, versions in sides:
                    if content == winner:
                        ok = ok and state in ('materialized', 'placeholder')
                    else:
                        ok = ok and content == loser and state == 'conflicted' and winner in versions
                if not ok or not any(content == loser for _, content, _ in sides):
                    bad.append('round %d: remote %r, here %r, there %r' % (i, winner, sides[0], sides[1]))
            print('%d rounds not settled' % len(bad))
            print('\\n'.join(bad[:10]))
            """
        let command = "python3 - '\(fixture.mountpoint)' '\(other.mountpoint)' "
            + "'\(fixture.remoteFolder)/com.folio.drive' \(Self.rounds) <<'EOF'\n\(checker)\nEOF"
        var report = ""
        let settled = Shell.waitUntil(timeout: 300) {
            guard self.fixture.pendingUploads == 0, other.pendingUploads == 0 else { return false }
            report = Shell.run(command, timeout: 120).stdout
            return report.hasPrefix("0 rounds not settled")
        }
        XCTAssertTrue(settled, "\(report)\nthis device's log:\n\(fixture.log.suffix(3000))")
    }
}
