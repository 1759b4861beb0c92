import FolioCore
import FolioProviderWebDAV
import Foundation
import XCTest

/// What a fault test needs: a ``MisbehavingServer``, the Drive's address on it, a throwaway state folder, and
/// providers made against it. ``stop()`` (from the test's `tearDown`, so also after a failure) ends the server and
/// the providers and removes the folder.
final class FaultFixture {
    /// The server the test scripts.
    let server: MisbehavingServer
    /// The provider's state folder.
    let state: URL
    private var providers: [WebDAVProvider] = []

    /// The collection that holds the containers: `/dav/`.
    static let base = "/dav/"
    /// The Drive container's collection: `/dav/com.folio.drive/`.
    static let drive = base + ContainerID.drive.rawValue + "/"

    /// Starts a server and makes the state folder.
    init() throws {
        server = try MisbehavingServer()
        state = FileManager.default.temporaryDirectory.appendingPathComponent("folio-faults-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        } catch {
            server.stop()
            throw error
        }
    }

    /// A provider for the server's `/dav/`, with `requestTimeout` and `attempts` when given.
    func provider(requestTimeout: Duration? = nil, attempts: Int? = nil) throws -> WebDAVProvider {
        var configuration = try WebDAVConfiguration(url: server.baseURL.absoluteString + Self.base)
        if let requestTimeout { configuration.requestTimeout = requestTimeout }
        if let attempts { configuration.attempts = attempts }
        let provider = try WebDAVProvider(configuration: configuration, stateFolder: state)
        providers.append(provider)
        return provider
    }

    /// Lists the Drive's root through `provider`.
    func listDrive(_ provider: WebDAVProvider) async throws -> [RemoteItem] {
        try await provider.enumerateFolder(nil, in: .drive, from: nil, pageSize: 1000).items
    }

    /// Ends the providers and the server, and removes the state folder.
    func stop() async {
        for provider in providers { await provider.shutdown() }
        providers = []
        server.stop()
        try? FileManager.default.removeItem(at: state)
    }
}
