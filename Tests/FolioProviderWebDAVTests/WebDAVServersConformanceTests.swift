import FolioCore
import FolioProviderWebDAV
import FolioTestServers
import FolioTesting
import Foundation
import XCTest

/// The provider conformance suite against the other real servers (rclone, wsgidav), each check in turn, so the
/// servers' differences show as the checks they fail. Apache, the reference, has one test per check
/// (``WebDAVConformanceTests``).
final class WebDAVServersConformanceTests: XCTestCase {
    /// Runs every check on a fresh server of `kind` and returns the failures by check.
    private func failures(
        on kind: WebDAVServerKind, options: ProviderConformance.Options, leaving left: [ProviderConformance.Check] = []
    ) async throws -> [String] {
        let server = try kind.start()
        defer { server.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("folio-webdav-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: state) }
        for collection in ["/dav/", "/dav/\(ContainerID.drive.rawValue)/", "/dav/\(WebDAVConformanceTests.notes.rawValue)/"] {
            XCTAssertEqual(try server.request("MKCOL", collection).status, 201, "MKCOL \(collection)")
        }
        let url = server.baseURL.absoluteString + "/dav/"
        let suite = ProviderConformance(
            options: options,
            makeProvider: { try WebDAVProvider(configuration: WebDAVConfiguration(url: url), stateFolder: state) })
        var failures: [String] = []
        for check in ProviderConformance.Check.allCases where ![.fetchCancellation, .conditionalChangesAtomicAcrossProcesses].contains(check) && !left.contains(check) {
            do {
                let outcome = try await suite.run(check)
                let excused = (check == .descriptionsPerVersion && !options.keepsDescriptions)
                    || (check == .tagsTravelWithMetadata && !options.keepsTags)
                if outcome != .passed && !excused {
                    failures.append("\(check): \(outcome)")
                }
            } catch {
                failures.append("\(check): \(error)")
            }
        }
        return failures
    }

    /// rclone keeps no dead properties and ignores `If-Match`/`If-None-Match`: no symlinks, modes, times, tags or
    /// descriptions (types, thumbnails) of Folio's on the server, and no retry tags (a retried upload whose first answer was lost becomes a conflict
    /// copy, never a loss); conditions are checked with a `PROPFIND` first.
    func testRclone() async throws {
        let failures = try await failures(
            on: .rclone,
            options: .init(
                container: .drive, secondContainer: WebDAVConformanceTests.notes, supportsSymlinks: false,
                preservesModificationTime: false, preservesMode: false, raceRounds: 10, keepsDescriptions: false,
                keepsTags: false),
            leaving: [.retryTagsRecognizeOwnWrites])
        XCTAssertEqual(failures, [], failures.joined(separator: "\n"))
    }

    func testWsgiDAV() async throws {
        let failures = try await failures(
            on: .wsgidav,
            options: .init(container: .drive, secondContainer: WebDAVConformanceTests.notes, raceRounds: 10))
        XCTAssertEqual(failures, [], failures.joined(separator: "\n"))
    }
}
