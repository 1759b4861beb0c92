import FolioCore
import FolioProviderWebDAV
import FolioTestServers
import Foundation
import SystemPackage
import XCTest

/// What the provider answers never hides a change made on the server, and a server whose storage went away never
/// looks like a remote whose documents were deleted (DESIGN.md §2, "The remote" and "Trust").
final class WebDAVSafetyTests: ApacheProviderTestCase {
    private func provider() throws -> WebDAVProvider {
        try fixture.provider()
    }

    private func create(_ provider: WebDAVProvider, _ name: String, _ text: String) async throws -> RemoteItem {
        let file = state.appendingPathComponent("upload-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        return try await provider.createItem(
            RemoteItemTemplate(
                id: .generate(), container: .drive, parentID: nil, name: name, kind: .file,
                modificationTime: .now(), mode: 0o644),
            contents: FilePath(file.path))
    }

    /// The Drive's collection vanishes from the server (its storage not mounted, say): a later run finds the remote
    /// offline, makes no empty stand-in, and reports nothing deleted.
    func testAMissingDriveIsOfflineNeverAnEmptyRemote() async throws {
        let first = try provider()
        _ = try await first.listContainers()
        _ = try await first.enumerateWholeFolder(nil, in: .drive)
        _ = try await create(first, "keep.txt", "keep")
        let anchor = try await first.currentAnchor(in: .drive)
        XCTAssertEqual(try server.request("DELETE", "/dav/com.folio.drive/").status, 204)

        let error = await failure { _ = try await first.changes(in: .drive, since: anchor) }
        guard case .offline? = error else { return XCTFail("changes: \(String(describing: error))") }
        await first.shutdown()

        let later = try provider()
        let refused = await failure { _ = try await later.listContainers() }
        guard case .offline(let why)? = refused else { return XCTFail("listContainers: \(String(describing: refused))") }
        XCTAssertTrue(why.contains("missing"), why)
        XCTAssertEqual(try server.request("PROPFIND", "/dav/com.folio.drive/", headers: ["Depth: 0"]).status, 404,
            "no empty stand-in was made")
        await later.shutdown()
    }

    private func failure(_ body: () async throws -> Void) async -> FolioError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? FolioError
        }
    }
}
