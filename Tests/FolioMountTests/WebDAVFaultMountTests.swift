import FolioTestServers
import Foundation
import XCTest

/// Issue 15, faults over a real Apache: the server killed during 200 uploads and started again (every committed
/// version arrives exactly once, in order); a 1 GiB file read by ranges while it downloads, its connection cut
/// mid-download (the download resumes); the server's disk full (the commit stays local, `folio status` says why,
/// the upload lands once there is room).
final class WebDAVFaultMountTests: WebDAVMountTestCase {
    /// Where a Drive document is, as a URL path on the server.
    private func urlPath(_ relative: String) -> String { Self.collection + "com.folio.drive/" + relative }

    /// The successful `PUT`s of `relative` in the server's access log.
    private func successfulPuts(_ relative: String, in log: [ApacheServer.AccessLogEntry]) -> [ApacheServer
        .AccessLogEntry]
    {
        log.filter { $0.method == "PUT" && $0.path == urlPath(relative) && $0.succeeded }
    }

    /// `folio status` of `device` as text.
    private func statusText(_ device: MountFixture) -> String {
        device.folio("status '\(device.mountpoint)'").stdout
    }

    // MARK: The server killed during uploads

    /// The name of document `number` (1…200).
    private static func document(_ number: Int) -> String { String(format: "doc-%03d.txt", number) }

    /// What document `number` holds.
    private static func documentText(_ number: Int) -> String { String(format: "document %03d\n", number) }

    /// Version `number` of the document rewritten across the outage: longer with every version.
    private static func versionText(_ number: Int) -> String {
        String(format: "version %02d ", number) + String(repeating: "x", count: number * 16) + "\n"
    }

    /// A shell script that writes documents `numbers` into the mount at `mountpoint`, each by its own open and
    /// close (one commit each), and after every 8th one the next version of `log.txt`.
    private static func writer(_ numbers: ClosedRange<Int>, into mountpoint: String) -> String {
        numbers.map { number in
            var line = "printf '%s' '\(documentText(number))' > '\(mountpoint)/\(document(number))'"
            if number % 8 == 0 { line += " && printf '%s' '\(versionText(number / 8))' > '\(mountpoint)/log.txt'" }
            return line
        }.joined(separator: " && \\\n")
    }

    func testServerKilledDuringTwoHundredUploadsAndStartedAgainGetsEveryVersionOnceInOrder() throws {
        let device = try mount()
        let m = device.mountpoint
        let uploaded = { self.serverNames("").filter { $0.hasPrefix("doc-") }.count }

        // Documents 1…100 (and versions 1…12 of log.txt), each committed; the server is killed once some arrived.
        Shell.check(Self.writer(1...100, into: m))
        XCTAssertTrue(Shell.waitUntil(timeout: 60) { uploaded() >= 20 }, "uploads did not start: \(statusText(device))")
        server.kill()
        let atKill = uploaded()
        let failuresBefore = device.log.components(separatedBy: "upload failed").count

        // Documents 101…160 and versions 13…20 are committed while the server is down; the daemon finds it
        // offline and its uploads fail (and are kept) before it comes back.
        Shell.check(Self.writer(101...160, into: m))
        XCTAssertTrue(
            Shell.waitUntil(timeout: 60) {
                device.log.components(separatedBy: "upload failed").count > failuresBefore
                    && self.statusText(device).contains("provider: OFFLINE")
            }, "the outage was not noticed: \(statusText(device))")
        XCTAssertEqual(Self.documentText(150), self.text(device, Self.document(150)), "committed while offline")
        try server.start()

        // Documents 161…200 and versions 21…25 after it is back.
        Shell.check(Self.writer(161...200, into: m))
        let last = Self.versionText(25)
        device.waitForUploads(timeout: 120)
        let expected = (1...200).map(Self.document) + ["log.txt"]
        XCTAssertTrue(
            Shell.waitUntil(timeout: 60) { self.serverNames("") == expected.sorted() },
            "on the server: \(serverNames("").count) names, not expected: "
                + "\(Set(serverNames("")).symmetricDifference(expected).sorted())")
        XCTAssertLessThan(atKill, 100, "the server was killed while uploads were under way")

        // Every document exactly once, with its content; log.txt at its last version.
        let log = server.accessLog()
        var wrong: [String] = []
        for number in 1...200 {
            let name = Self.document(number)
            let puts = successfulPuts(name, in: log)
            if serverText(name) != Self.documentText(number) || puts.count != 1 {
                wrong.append("\(name): \(puts.count) successful PUTs, content \(String(describing: serverText(name)))")
            }
        }
        XCTAssertEqual(wrong, [], "\(wrong.count) documents are not on the server exactly once")
        XCTAssertEqual(serverText("log.txt"), last)
        XCTAssertEqual(text(device, "log.txt"), last)

        // In order: the versions of log.txt that were sent never go back to an older (shorter) one.
        let lengths = successfulPuts("log.txt", in: log).map { $0.contentLength ?? -1 }
        XCTAssertEqual(lengths, lengths.sorted(), "a PUT of an older version came after a newer one: \(lengths)")
        XCTAssertEqual(Set(lengths).count, lengths.count, "a version was sent twice: \(lengths)")
        XCTAssertEqual(lengths.last, Int64(last.utf8.count))

        let status = statusText(device)
        XCTAssertTrue(status.contains("uploads:  0 pending"), status)
        XCTAssertFalse(status.contains("FAILED"), status)
        XCTAssertFalse(status.contains("conflicted"), status)
    }
}
