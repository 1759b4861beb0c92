import FolioCore
import FolioProviderWebDAV
import Foundation

extension Daemon {
    /// Opens the WebDAV server `server` and asks it for its containers once (which makes the Drive collection if
    /// it is missing). A state synced with another remote is refused, nothing changed. A server that refuses
    /// the account (401, 403) fails the mount with the reason; one that cannot be reached, or does not answer
    /// as it should, fails a first mount but not a later one, which shows what the state knows (offline).
    func openServer(_ server: WebDAVConfiguration, recorded: String?) throws(FolioError) -> OpenedRemote {
        let identity = RemoteLocation.webDAVIdentity(of: server)
        if let recorded, recorded != identity {
            throw .invalidArgument(
                "the state folder \(configuration.stateDirectory) was synced with another remote (\(recorded)), "
                    + "not \(identity): give each remote a state folder of its own (--state); nothing was changed")
        }
        let provider = try WebDAVProvider(
            configuration: server, stateFolder: URL(fileURLWithPath: configuration.stateDirectory.string))
        let reached: FolioError? = blockOn {
            do {
                _ = try await provider.listContainers()
                return nil
            } catch {
                return FolioError(error)
            }
        }
        guard let error = reached else { return .webDAV(provider, identity: identity) }
        var refusesAccount = false
        if case .accessDenied = error { refusesAccount = true }
        if refusesAccount || recorded == nil {
            blockOn { await provider.shutdown() }
            throw error
        }
        logger.warning("\(server.baseURL) cannot be reached now (\(error)): mounting with what the state knows")
        return .webDAV(provider, identity: identity)
    }
}
