import FolioCore
import FolioTesting
import XCTest

/// The provider conformance suite against ``InMemoryProvider``, one test per check: the provider the
/// reference-model test drives as the remote of another device keeps the contract every real provider keeps.
final class InMemoryProviderConformanceTests: XCTestCase {
    /// The second container, for moves across containers.
    static let notes = Container(id: ContainerID("com.example.notes"), displayName: "Notes", isPublic: true)

    /// A suite over one fresh in-memory remote (every provider the suite asks for is that one remote).
    private func suite() -> ProviderConformance {
        let provider = InMemoryProvider(containers: [Self.notes], changesPerAnswer: 3)
        return ProviderConformance(
            options: ProviderConformance.Options(
                container: .drive, secondContainer: Self.notes.id,
                expireAnchors: { container in provider.expireAnchors(in: container) }),
            makeProvider: { provider })
    }

    /// Runs one check and fails the test (with the suite's message) if it does not pass.
    private func assertPasses(_ check: ProviderConformance.Check, skipped: Bool = false) async throws {
        let outcome = try await suite().run(check)
        if skipped {
            guard case .skipped = outcome else { return XCTFail("\(check) was \(outcome), expected skipped") }
        } else {
            XCTAssertEqual(outcome, .passed, "\(check) was \(outcome)")
        }
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
    /// Skipped: the in-memory remote copies at once, never slowly enough to be cancelled midway.
    func testFetchCancellation() async throws { try await assertPasses(.fetchCancellation, skipped: true) }
    func testRangedFetch() async throws { try await assertPasses(.rangedFetch) }
    /// Skipped: a remote in memory has no other process to race with (its lock makes every call atomic).
    func testConditionalChangesAtomicAcrossProcesses() async throws {
        try await assertPasses(.conditionalChangesAtomicAcrossProcesses, skipped: true)
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

    /// The whole suite on one remote leaves it as it found it.
    func testRunAllLeavesTheRemoteClean() async throws {
        let provider = InMemoryProvider(containers: [Self.notes])
        let suite = ProviderConformance(
            options: ProviderConformance.Options(
                container: .drive, secondContainer: Self.notes.id,
                expireAnchors: { container in provider.expireAnchors(in: container) }),
            makeProvider: { provider })
        try await suite.runAll()
        XCTAssertEqual(provider.items(in: .drive).map(\.name), [])
        XCTAssertEqual(provider.items(in: Self.notes.id).map(\.name), [])
    }

    /// Injected faults: one before the call changes nothing; one after it changes the remote and loses the
    /// answer; offline fails every call.
    func testFaults() async throws {
        let provider = InMemoryProvider()
        let template = RemoteItemTemplate(
            id: .generate(), container: .drive, parentID: nil, name: "a", kind: .directory, modificationTime: .now(),
            mode: 0o755)
        provider.inject(.before(.offline("injected")), on: .createItem)
        do {
            _ = try await provider.createItem(template, contents: nil)
            XCTFail("the injected fault did not fail the create")
        } catch FolioError.offline {}
        XCTAssertTrue(provider.items().isEmpty)
        provider.inject(.afterApplying(.interrupted("answer lost")), on: .createItem)
        do {
            _ = try await provider.createItem(template, contents: nil)
            XCTFail("the injected fault did not fail the create")
        } catch FolioError.interrupted {}
        XCTAssertEqual(provider.items().map(\.name), ["a"])
        provider.isOffline = true
        do {
            _ = try await provider.listContainers()
            XCTFail("an offline remote answered")
        } catch FolioError.offline {}
        provider.isOffline = false
        XCTAssertEqual(provider.callCount(.createItem), 2)
        let containers = try await provider.listContainers()
        XCTAssertEqual(containers.map(\.id), [.drive])
    }
}
