import FolioCore
import FolioProviderLocal
import FolioTesting
import Foundation
import SystemPackage
import XCTest

/// The other process of the conformance suite's race across processes: this test bundle run again with only
/// ``testServeAsRival()`` selected and the remote in `FOLIO_RIVAL_REMOTE`, serving commands with a
/// ``LocalProvider`` of its own (another process, so nothing of the suite's provider is shared but the remote).
final class RivalProcessEntry: XCTestCase {
    /// The variable that names the remote, and makes ``testServeAsRival()`` serve.
    static let remoteVariable = "FOLIO_RIVAL_REMOTE"

    /// Starts a rival process over the remote at `remote`.
    static func start(remote: FilePath) throws -> ProviderRival {
        try ProviderRival(
            executable: "/proc/self/exe", arguments: ["FolioProviderLocalTests.RivalProcessEntry/testServeAsRival"],
            environment: [remoteVariable: remote.string])
    }

    /// Serves rival commands when run as the rival process; skipped in a normal test run.
    func testServeAsRival() async throws {
        guard let remote = ProcessInfo.processInfo.environment[Self.remoteVariable] else {
            throw XCTSkip("the entry point of the rival process in the race across processes")
        }
        await ProviderRival.serve(provider: try LocalProvider(root: FilePath(remote)))
    }
}
