import FolioCore
import FolioProviderLocal
import FolioTesting
import XCTest

/// The provider conformance suite against ``LocalProvider`` on a temporary remote, one test per check.
final class LocalProviderConformanceTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote()
    }

    override func tearDownWithError() throws {
        remote.remove()
    }

    /// The suite over this test's remote, with a rival process.
    private var suite: ProviderConformance { suite(withRival: true) }

    private func suite(withRival: Bool) -> ProviderConformance { remote.conformanceSuite(withRival: withRival) }

    /// Runs one check and fails the test (with the suite's message) if it does not pass.
    private func assertPasses(_ check: ProviderConformance.Check) async throws {
        let outcome = try await suite.run(check)
        XCTAssertEqual(outcome, .passed, "\(check) was \(outcome)")
    }

    func testCreateAndEnumerate() async throws { try await assertPasses(.createAndEnumerate) }
    func testIDsStableAcrossRenameAndMove() async throws { try await assertPasses(.idsStableAcrossRenameAndMove) }
    func testIDsStableAcrossContainers() async throws { try await assertPasses(.idsStableAcrossContainers) }
    func testFetchReturnsExactBytes() async throws { try await assertPasses(.fetchReturnsExactBytes) }
    func testFetchChecksVersionAndExistence() async throws {
        try await assertPasses(.fetchChecksVersionAndExistence)
    }
    func testStaleModifyConflicts() async throws { try await assertPasses(.staleModifyConflicts) }
    func testCreateIsIdempotent() async throws { try await assertPasses(.createIsIdempotent) }
    func testCreateManyAtOnce() async throws { try await assertPasses(.createManyAtOnce) }
    func testRetryTagsRecognizeOwnWrites() async throws { try await assertPasses(.retryTagsRecognizeOwnWrites) }
    func testDeleteIsIdempotent() async throws { try await assertPasses(.deleteIsIdempotent) }
    func testDeleteNonEmptyFolderFails() async throws { try await assertPasses(.deleteNonEmptyFolderFails) }
    func testBadNamesAreRefused() async throws { try await assertPasses(.badNamesAreRefused) }
    func testFetchCancellation() async throws { try await assertPasses(.fetchCancellation) }
    func testRangedFetch() async throws { try await assertPasses(.rangedFetch) }
    func testConditionalChangesAtomicAcrossProcesses() async throws {
        try await assertPasses(.conditionalChangesAtomicAcrossProcesses)
    }

    func testEnumerationPages() async throws { try await assertPasses(.enumerationPages) }
    func testChangeDuringPagedEnumeration() async throws { try await assertPasses(.changeDuringPagedEnumeration) }
    func testAnchorsAcrossRestarts() async throws { try await assertPasses(.anchorsAcrossRestarts) }
    func testExpiredAnchors() async throws { try await assertPasses(.expiredAnchors) }
    func testItemLookup() async throws { try await assertPasses(.itemLookup) }
    func testChangesCostInProportion() async throws { try await assertPasses(.changesCostInProportion) }
    func testDescriptionsPerVersion() async throws { try await assertPasses(.descriptionsPerVersion) }
    func testTagsTravelWithMetadata() async throws { try await assertPasses(.tagsTravelWithMetadata) }

    /// Every check is covered by a test above.
    func testEveryCheckHasATest() {
        XCTAssertEqual(ProviderConformance.Check.allCases.count, 23, "add a test method for the new check")
    }

    /// The whole suite on one remote, with the checks sharing it, leaves the remote as it found it (the race
    /// across processes, long and run above, is left out).
    func testRunAllLeavesTheRemoteClean() async throws {
        let outcomes = try await suite(withRival: false).runAll()
        XCTAssertTrue(
            outcomes.filter { $0.key != .conditionalChangesAtomicAcrossProcesses }.values.allSatisfy { $0 == .passed },
            "\(outcomes)")
        let provider = try remote.provider()
        let drive = try await provider.enumerateItems(in: .drive).items
        let notes = try await provider.enumerateItems(in: TemporaryRemote.notes.id).items
        XCTAssertEqual(drive.map(\.name), [])
        XCTAssertEqual(notes.map(\.name), [])
    }
}
