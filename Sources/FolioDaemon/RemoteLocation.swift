import FolioCore
import FolioProviderWebDAV
import Foundation
import SystemPackage

/// Where a mount's documents are kept: a folder (the local provider) or a WebDAV server.
public enum RemoteLocation: Sendable, CustomStringConvertible {
    /// A remote folder on this machine (``FolioProviderLocal``).
    case folder(FilePath)
    /// A collection on a WebDAV server, with the account and trust settings to reach it.
    case webDAV(WebDAVConfiguration)

    /// A collection on a WebDAV server at `url`, with the account `user` and its `password`, trusting the
    /// certificate authorities of `caFile` (PEM) instead of the system's; checked as
    /// ``WebDAVConfiguration/init(url:user:password:caFile:insecure:)`` checks it.
    public static func webDAVServer(
        url: String, user: String?, password: String?, caFile: String?, insecure: Bool
    ) throws(FolioError) -> RemoteLocation {
        .webDAV(try WebDAVConfiguration(url: url, user: user, password: password, caFile: caFile, insecure: insecure))
    }

    /// Whether `remote` (as given to `--remote`) names a server rather than a folder: it has a scheme (`://`).
    public static func isAddress(_ remote: String) -> Bool {
        remote.contains("://")
    }

    /// The folder's path, or the collection's address (never with credentials): what `mount` and
    /// `folio status` show as the mount's source.
    public var description: String {
        switch self {
        case .folder(let path): path.string
        case .webDAV(let configuration): configuration.baseURL.absoluteString
        }
    }

    /// What a state folder synced with this remote records as its identity, for a WebDAV remote (a folder
    /// remote keeps its own id in the folder): the collection's address and the account, so a state is never
    /// pointed at another server, collection or account.
    static func webDAVIdentity(of configuration: WebDAVConfiguration) -> String {
        "webdav:" + (configuration.user.map { $0 + "@" } ?? "") + configuration.baseURL.absoluteString
    }
}
