import Foundation
import XCTest

/// Issue 3: provider errors at a 30 % rate on every call, half of them after the call did its work (the reply
/// is lost, so the retry finds the change already made): every upload eventually succeeds, none is
/// duplicated, nothing is lost.
final class FaultInjectionTests: MountTestCase {
    override func prepareRemote() throws {
        try fixture.simulateNetwork(#"{"errorRate": 0.15, "lostReplyRate": 0.18, "seed": 7}"#)
    }

    func testEveryChangeArrivesOnceDespiteFailingCalls() throws {
        let m = fixture.mountpoint
        Shell.check("""
            set -e
            mkdir '\(m)/A' '\(m)/B'
            for i in $(seq 1 40); do echo "file $i" > '\(m)/A/f'$i.txt; done
            """)
        // Once they are on the remote, changes to them are modifications (content and metadata) and deletes.
        fixture.waitForUploads(timeout: 240)
        Shell.check("""
            set -e
            for i in $(seq 1 25); do echo "second $i" > '\(m)/A/f'$i.txt; sleep 0.05; done
            for i in $(seq 26 32); do mv '\(m)/A/f'$i.txt '\(m)/B/g'$i.txt; done
            for i in $(seq 33 36); do rm '\(m)/A/f'$i.txt; done
            """)
        var expected: [String: String] = [:]
        for index in 1...25 { expected["A/f\(index).txt"] = "second \(index)\n" }
        for index in 37...40 { expected["A/f\(index).txt"] = "file \(index)\n" }
        for index in 26...32 { expected["B/g\(index).txt"] = "file \(index)\n" }

        fixture.waitForUploads(timeout: 240)
        let log = fixture.log
        XCTAssertTrue(log.contains("simulated network failure"), "calls failed before doing anything")
        XCTAssertTrue(log.contains("reply lost (simulated)"), "and after doing it")

        // The remote has exactly the expected files, with the expected contents: no duplicates, no leftovers.
        let drive = fixture.remote + "/com.folio.drive"
        let listed = Shell.check("cd '\(drive)' && find . -type f ! -name '.*' | sed 's|^./||' | sort")
        XCTAssertEqual(listed.split(separator: "\n").map(String.init), expected.keys.sorted())
        for (path, content) in expected {
            XCTAssertEqual(try? String(contentsOfFile: drive + "/" + path, encoding: .utf8), content, path)
        }
        let status = fixture.folio("status '\(m)'").stdout
        XCTAssertFalse(status.contains("conflicted"), status)
        XCTAssertFalse(status.contains("FAILED"), status)
        XCTAssertEqual(Shell.check("cat '\(m)/A/f5.txt' '\(m)/B/g30.txt'"), "second 5\nfile 30\n")
    }
}
