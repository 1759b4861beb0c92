import FolioCore
@testable import FolioProviderWebDAV
import FolioTestServers
import Foundation
import XCTest

/// A look for changes does not list again a folder whose last listing began less than
/// ``WebDAVConfiguration/freshListing`` ago (a reader's enumeration of a big folder is not followed at once by the
/// same `PROPFIND` from the poll), and a change made after that listing is found by the first look after the window.
final class WebDAVFreshListingTests: ApacheProviderTestCase {
    private func provider(freshListing: Duration) throws -> WebDAVProvider {
        var configuration = try WebDAVConfiguration(url: server.baseURL.absoluteString + "/dav/")
        configuration.freshListing = freshListing
        return try WebDAVProvider(configuration: configuration, stateFolder: state)
    }

    /// Lists the Drive's root and its folder `big/` (holding `a.txt`); returns the anchor after those listings.
    private func listBig(_ provider: WebDAVProvider) async throws -> SyncAnchor {
        _ = try await provider.listContainers()
        XCTAssertEqual(try server.request("MKCOL", "/dav/com.folio.drive/big/").status, 201)
        XCTAssertEqual(try server.request("PUT", "/dav/com.folio.drive/big/a.txt", body: Data("a".utf8)).status, 201)
        let root = try await provider.enumerateWholeFolder(nil, in: .drive)
        let big = try XCTUnwrap(root.first { $0.name == "big" })
        let inBig = try await provider.enumerateWholeFolder(big.id, in: .drive)
        XCTAssertEqual(inBig.map(\.name), ["a.txt"])
        return try await provider.currentAnchor(in: .drive)
    }

    /// Every level of one look for changes; returns the changes found and the folders the look listed.
    private func look(_ provider: WebDAVProvider, since anchor: SyncAnchor) async throws -> (
        names: [String], listed: [String]
    ) {
        let before = server.settledAccessLog().count
        var names: [String] = []
        var changes = try await provider.changes(in: .drive, since: anchor)
        names += changes.updated.map(\.name)
        while changes.moreComing {
            changes = try await provider.changes(in: .drive, since: anchor)
            names += changes.updated.map(\.name)
        }
        // (Apache logs a request after its answer is sent: the look's last line can come after the look returned.)
        let listed = server.settledAccessLog().dropFirst(before).filter { $0.method == "PROPFIND" }.map(\.path)
        return (names, listed)
    }

    func testAFolderListedWithinTheWindowIsListedAgainOnlyOnceItPassed() async throws {
        let window = Duration.seconds(4)
        let provider = try provider(freshListing: window)
        let listedAt = ContinuousClock.now
        let anchor = try await listBig(provider)
        let listedBy = ContinuousClock.now  // every listing of `listBig` began before this
        XCTAssertEqual(try server.request("PUT", "/dav/com.folio.drive/big/b.txt", body: Data("b".utf8)).status, 201)

        let early = try await look(provider, since: anchor)
        if ContinuousClock.now - listedAt < window {  // a machine slow enough to pass the window proves nothing here
            XCTAssertFalse(early.listed.contains("/dav/com.folio.drive/big/"), "listed again at once: \(early.listed)")
            XCTAssertFalse(early.names.contains("b.txt"))
        }

        // Not a hope: the window is a fixed time, and the look after it must list the folder again.
        try await Task.sleep(until: listedBy + window + .milliseconds(100), clock: .continuous)
        let later = try await look(provider, since: anchor)
        XCTAssertTrue(later.listed.contains("/dav/com.folio.drive/big/"), "\(later.listed)")
        XCTAssertTrue((early.names + later.names).contains("b.txt"), "the change after the listing is found")
        await provider.shutdown()
    }

    /// Only the listings of the last window are kept: a folder listed once and gone since is forgotten, and
    /// without a window nothing is kept.
    func testListingsOlderThanTheWindowAreForgotten() async throws {
        let provider = try provider(freshListing: .milliseconds(300))
        let anchor = try await listBig(provider)
        XCTAssertEqual(provider.listingStarts.withLock { $0.count }, 2, "the root and big/")
        XCTAssertEqual(try server.request("DELETE", "/dav/com.folio.drive/big/").status, 204)
        try await Task.sleep(for: .milliseconds(400))
        _ = try await look(provider, since: anchor)
        XCTAssertEqual(
            provider.listingStarts.withLock { Set($0.keys) }, [.root(of: .drive)], "big/ is gone and forgotten")
        await provider.shutdown()

        let unwindowed = try self.provider(freshListing: .zero)
        _ = try await listBig(unwindowed)
        XCTAssertEqual(unwindowed.listingStarts.withLock { $0.count }, 0)
        await unwindowed.shutdown()
    }

    func testWithoutAWindowEveryFolderOfTheWorkingSetIsListedAtEveryLook() async throws {
        let provider = try provider(freshListing: .zero)
        let anchor = try await listBig(provider)
        XCTAssertEqual(try server.request("PUT", "/dav/com.folio.drive/big/b.txt", body: Data("b".utf8)).status, 201)
        let found = try await look(provider, since: anchor)
        XCTAssertTrue(found.listed.contains("/dav/com.folio.drive/big/"), "\(found.listed)")
        XCTAssertTrue(found.listed.contains("/dav/com.folio.drive/"), "\(found.listed)")
        XCTAssertTrue(found.names.contains("b.txt"))
        await provider.shutdown()
    }
}
