import FolioCore
import FolioProviderLocal
import FolioProviderWebDAV

/// The provider a daemon opened for its remote, with the little that differs between the two kinds: the
/// identity recorded in the state, and how the provider is closed at the end.
enum OpenedRemote: Sendable {
    /// A remote folder.
    case local(LocalProvider)
    /// A WebDAV server, and the identity its state records.
    case webDAV(WebDAVProvider, identity: String)

    /// The provider, for the sync services.
    var provider: any Provider {
        switch self {
        case .local(let provider): provider
        case .webDAV(let provider, _): provider
        }
    }

    /// The remote's identity, recorded in the state at the first mount and checked at every later one.
    var remoteID: String {
        switch self {
        case .local(let provider): provider.remoteID
        case .webDAV(_, let identity): identity
        }
    }

    /// Ends what the provider runs by itself (the local provider's watcher, the WebDAV connections).
    func close() async {
        switch self {
        case .local(let provider): provider.stopWatchingForGood()
        case .webDAV(let provider, _): await provider.shutdown()
        }
    }
}
