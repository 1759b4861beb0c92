import Foundation
import XCTest

/// The daemon raises its open-files limit to the hard one: started with a low soft limit (often 1,024 on a
/// desktop), the descriptors of the uploads in flight (up to 512) and the users' open files would not fit.
final class DescriptorLimitTests: MountTestCase {
    private var lowered: rlimit?

    /// Lowers this process's soft limit while the daemon starts (it inherits it); restored at once after.
    override func prepareRemote() throws {
        var limit = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        try XCTSkipIf(limit.rlim_max <= 512, "the hard limit is too low to lower the soft one below it")
        lowered = limit
        var low = limit
        low.rlim_cur = 512
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &low), 0)
        addTeardownBlock { [limit] in
            var restored = limit
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &restored)
        }
    }

    func testTheDaemonRaisesItsOpenFilesLimit() throws {
        var original = try XCTUnwrap(lowered)
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &original), 0)
        let daemon = try XCTUnwrap(fixture.daemon)
        let limits = try String(contentsOfFile: "/proc/\(daemon.processIdentifier)/limits", encoding: .utf8)
        let line = try XCTUnwrap(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        // "Max open files  <soft>  <hard>  files"
        XCTAssertEqual(fields.count, 6, String(line))
        XCTAssertEqual(fields[3], fields[4], "soft limit raised to the hard one: \(line)")
        XCTAssertNotEqual(fields[3], "512", String(line))
    }
}
