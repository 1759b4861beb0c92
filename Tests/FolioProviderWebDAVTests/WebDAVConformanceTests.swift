import FolioCore
import FolioProviderWebDAV
import FolioTestServers
import FolioTesting
import Foundation
import XCTest

/// The provider conformance suite against ``WebDAVProvider`` over a private Apache httpd with `mod_dav`, one test
/// per check. Every provider a check makes shares one state folder (a restart keeps the index and the journal,
/// as the daemon's state folder does).
final class WebDAVConformanceTests: XCTestCase {
    private var server: ApacheServer!
    private var state: URL!
    static let notes = ContainerID("com.example.notes")

    override func setUpWithError() throws {
        server = try startOrSkip { try ApacheServer() }
        state = FileManager.default.temporaryDirectory.appendingPathComponent("folio-webdav-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        XCTAssertEqual(try server.request("MKCOL", "/dav/").status, 201)
        XCTAssertEqual(try server.request("MKCOL", "/dav/\(Self.notes.rawValue)/").status, 201)
        XCTAssertEqual(try server.request("MKCOL", "/dav/\(ContainerID.drive.rawValue)/").status, 201)
    }

    override func tearDownWithError() throws {
        server?.stop()
        if let state { try? FileManager.default.removeItem(at: state) }
    }

    private var suite: ProviderConformance {
        let url = server.baseURL.absoluteString + "/dav/"
        let state = self.state!
        return ProviderConformance(
            options: ProviderConformance.Options(
                container: .drive, secondContainer: Self.notes, raceRounds: 10),
            makeProvider: {
                try WebDAVProvider(configuration: WebDAVConfiguration(url: url), stateFolder: state)
            })
    }

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
    func testRangedFetch() async throws { try await assertPasses(.rangedFetch) }
    func testEnumerationPages() async throws { try await assertPasses(.enumerationPages) }
    func testChangeDuringPagedEnumeration() async throws { try await assertPasses(.changeDuringPagedEnumeration) }
    func testAnchorsAcrossRestarts() async throws { try await assertPasses(.anchorsAcrossRestarts) }
    func testExpiredAnchors() async throws { try await assertPasses(.expiredAnchors) }
    func testItemLookup() async throws { try await assertPasses(.itemLookup) }
    func testChangesCostInProportion() async throws { try await assertPasses(.changesCostInProportion) }
    func testDescriptionsPerVersion() async throws { try await assertPasses(.descriptionsPerVersion) }
    func testTagsTravelWithMetadata() async throws { try await assertPasses(.tagsTravelWithMetadata) }
}
