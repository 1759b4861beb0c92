import FolioCore
import FolioProviderWebDAV
import FolioSync
import Foundation

extension Daemon {
    /// Opens the WebDAV server `server`. A state synced with another remote is refused, nothing changed. At a
    /// first mount (no `recorded` identity) the server is asked for its containers at once (which makes the Drive
    /// collection if it is missing), and any failure fails the mount with the reason: a wrong password is
    /// "authentication failed", not an empty mount. A later mount shows what the state knows whatever the server
    /// answers (offline, or a refused password, which `folio status` then shows).
    func openServer(_ server: WebDAVConfiguration, recorded: String?) throws(FolioError) -> OpenedRemote {
        let identity = RemoteLocation.webDAVIdentity(of: server)
        if let recorded, recorded != identity {
            throw .invalidArgument(
                "the state folder \(configuration.stateDirectory) was synced with another remote (\(recorded)), "
                    + "not \(identity): give each remote a state folder of its own (--state); nothing was changed")
        }
        var server = server
        // A folder listed within the last poll interval is not listed again by the next poll.
        server.freshListing = configuration.pollInterval ?? RemotePoller.defaultInterval
        let provider = try WebDAVProvider(
            configuration: server, stateFolder: URL(fileURLWithPath: configuration.stateDirectory.string))
        guard recorded == nil else { return .webDAV(provider, identity: identity) }
        let failure: FolioError? = blockOn {
            do {
                _ = try await provider.listContainers()
                return nil
            } catch {
                return FolioError(error)
            }
        }
        if let failure {
            blockOn { await provider.shutdown() }
            throw failure
        }
        return .webDAV(provider, identity: identity)
    }
}
