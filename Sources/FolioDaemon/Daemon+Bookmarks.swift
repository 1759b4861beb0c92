import FolioCore
import Foundation

/// A resolved bookmark, as `folio resolve --json` prints it.
public struct BookmarkResolution: Codable, Sendable {
    /// The document's absolute path now (through the mount that answered).
    public var path: String
    /// The same path relative to that mount's root.
    public var relativePath: String
    /// The document the bookmark named was replaced (a save that made a new item at its place): ``path`` is the
    /// document there now, and ``bookmark`` a fresh token for it, to keep instead of the old one.
    public var stale: Bool
    /// The token to keep: the one resolved, or a fresh one when ``stale``.
    public var bookmark: String
    /// The item id the path opens.
    public var id: String
}

extension Daemon {
    /// Answers `bookmark` (a path → a token), `resolve-bookmark` (a token → the path now), `recents`, `grants` and
    /// `revoke`;
    /// `nil` for any other command. Paths are relative to the root of `view`, the view of the mount at `mountpoint`.
    func handleBookmarkCommand(
        _ request: ControlRequest, fileSystem: FolioFileSystem, view: NamespaceView, mountpoint: String
    ) -> ControlResponse? {
        guard ["bookmark", "resolve-bookmark", "grants", "revoke", "recents"].contains(request.command) else {
            return nil
        }
        var response = ControlResponse(ok: true)
        do throws(FolioError) {
            switch request.command {
            case "bookmark":
                let ino = try resolveListing(request.path, fileSystem: fileSystem, view: view)
                guard let identity = fileSystem.identity(of: ino) else {
                    throw .invalidArgument("the root of a view cannot be bookmarked")
                }
                let token = try signer().token(for: BookmarkContent(
                    item: identity.item.rawValue, folder: identity.folder?.rawValue, name: identity.name,
                    view: BookmarkSigner.viewKey(view), installation: ""))
                response.message = token
            case "resolve-bookmark":
                guard let token = request.target else { throw .invalidArgument("resolve needs a bookmark token") }
                response.bookmark = try resolveBookmark(token, fileSystem: fileSystem, view: view, mountpoint: mountpoint)
            case "recents":
                var shown = view
                if let app = request.app.map({ ContainerID($0) }), view != .app(app) {
                    guard view == .full else {
                        throw .accessDenied("the \(view) shows only its own recents")
                    }
                    shown = .app(app)
                }
                response.recents = try fileSystem.recents(in: shown)
            case "grants":
                var item: ItemID?
                if let path = request.path {
                    let ino = try resolveListing(path, fileSystem: fileSystem, view: view)
                    item = fileSystem.identity(of: ino)?.item
                }
                response.grants = fileSystem.grants(of: item)
            default:
                guard let path = request.path, let app = request.app else {
                    throw .invalidArgument("revoke needs a document and an app container id")
                }
                let ino = try resolveListing(path, fileSystem: fileSystem, view: view)
                let count = try fileSystem.revokeReferences(to: ino, app: ContainerID(app))
                guard count > 0 else { throw .notFound("\(app) holds no grant of \(path)") }
                response.message = "\(app) can no longer open \(path) (\(Wording.count(count, "reference")) removed)"
            }
        } catch {
            return ControlResponse(ok: false, error: "\(error)")
        }
        return response
    }

    /// The item `token` names, where `view` can open it now.
    ///
    /// - The item is found by id, wherever it went (renames, moves, eviction, restarts).
    /// - An item `view` cannot reach (another app's, never granted to this one) is refused, and so is a token made
    ///   in another view for it: a bookmark never opens what the view has no right to.
    /// - An item that is gone, with a document now at its old place (a save that replaced it with a new item),
    ///   resolves to that document as `stale`, with a fresh token; otherwise it is a clear `notFound`.
    private func resolveBookmark(
        _ token: String, fileSystem: FolioFileSystem, view: NamespaceView, mountpoint: String
    ) throws(FolioError) -> BookmarkResolution {
        let signer = try signer()
        let content = try signer.content(of: token)
        let item = ItemID(content.item)
        let madeIn = content.view == BookmarkSigner.viewKey(view) ? "this view" : Self.viewName(content.view)
        if fileSystem.ino(of: item) != nil {
            guard let path = try fileSystem.locations(of: item, in: view).first else {
                throw .accessDenied(
                    "the bookmarked document is not in the \(view) (the bookmark was made in \(madeIn)), and was "
                        + "not granted to it: refused")
            }
            return BookmarkResolution(
                path: Self.absolute(path, mountpoint: mountpoint), relativePath: path, stale: false,
                bookmark: token.trimmingCharacters(in: .whitespacesAndNewlines), id: item.rawValue)
        }
        if let folder = content.folder.map({ ItemID($0) }),
           let replacement = fileSystem.item(named: content.name, inFolder: folder),
           let path = try fileSystem.locations(of: replacement, in: view).first,
           let ino = fileSystem.ino(of: replacement), let identity = fileSystem.identity(of: ino) {
            let fresh = signer.token(for: BookmarkContent(
                item: identity.item.rawValue, folder: identity.folder?.rawValue, name: identity.name,
                view: BookmarkSigner.viewKey(view), installation: ""))
            return BookmarkResolution(
                path: Self.absolute(path, mountpoint: mountpoint), relativePath: path, stale: true, bookmark: fresh,
                id: replacement.rawValue)
        }
        throw .notFound("the bookmarked document (\(content.name)) was deleted")
    }

    /// The bookmark signer of this daemon's state.
    private func signer() throws(FolioError) -> BookmarkSigner {
        guard let signer = bookmarkSigner.withLock({ $0 }) else {
            throw .notSupported("this daemon has no bookmark key")
        }
        return signer
    }

    /// `path` relative to the root of `view`, listing folders on the way that were never listed (every command
    /// about a path resolves it here).
    func resolveListing(
        _ path: String?, fileSystem: FolioFileSystem, view: NamespaceView
    ) throws(FolioError) -> UInt64 {
        guard let path else { throw .invalidArgument("a path is needed") }
        return try blockOn { () async -> Result<UInt64, FolioError> in
            do throws(FolioError) {
                return .success(try await fileSystem.resolveListing(path: path, in: view))
            } catch {
                return .failure(error)
            }
        }.get()
    }

    private static func absolute(_ relative: String, mountpoint: String) -> String {
        relative.isEmpty ? mountpoint : (mountpoint == "/" ? "/" : mountpoint + "/") + relative
    }

    private static func viewName(_ key: String) -> String {
        key.hasPrefix("app:") ? "the app view of \(key.dropFirst(4))" : "the full view"
    }
}
