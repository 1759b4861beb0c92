import FolioCore
import Foundation
import Synchronization

/// The provider of a WebDAV server: containers are the collections under the configured one (the Drive,
/// `com.folio.drive`, made if missing), folders are listed with `PROPFIND Depth: 1` (never `infinity`), versions
/// are ETags (or `getlastmodified` and size where a server sends none), and every change is conditional
/// (`If-Match`, `If-None-Match: *`, `Overwrite: F`), so a change made meanwhile on the server is a conflict,
/// never overwritten.
///
/// Identity: an item made or changed through Folio carries its id as a dead property (`folio:id`, which `MOVE`
/// keeps); an item only ever seen on the server is known by its path (`dav:PATH`) until Folio changes it. The
/// ``ItemIndex`` turns ids into paths and is kept in the mount's state folder.
///
/// Changes: the folders Folio has listed (the working set) are listed again at each ``changes(in:since:)``, and
/// what differs from the last listing is reported; nothing outside the working set is ever asked for. The
/// history that anchors point into is the ``WebDAVJournal``, kept beside the index.
public final class WebDAVProvider: Provider {
    let client: WebDAVClient
    let index: ItemIndex
    /// The working set's history, which anchors point into.
    let journal: WebDAVJournal
    /// Listings being paged through, by cursor token.
    let pagedListings = Mutex<[String: [RemoteItem]]>([:])
    /// The levels of the working set a look for changes has still to list again, by container (parents first):
    /// each call of ``changes(in:since:)`` lists one level and answers what it found, so a change near the root
    /// shows before a big folder deeper down is listed.
    let changePasses = Mutex<[ContainerID: [[ItemID]]]>([:])
    /// When the last listing of each folder began (``WebDAVConfiguration/freshListing``).
    let listingStarts = Mutex<[ItemID: ContinuousClock.Instant]>([:])
    /// What the server was found to do (``serverTraits()``), once known.
    let traits = Mutex<WebDAVServerTraits?>(nil)
    /// Sends this provider's `LOCK` and `UNLOCK` requests one at a time.
    let lockRequests = SerialGate()
    /// The write locks taken and not released yet, also by an earlier run.
    let lockBook: WebDAVLockBook

    /// The name of the resource that keeps the containers' display names and public flags.
    static let manifestName = ".folio-containers.json"

    /// A provider for the server `configuration` names, keeping its item index and change journal in
    /// `stateFolder` (the mount's state folder; `nil`: in memory only, so anchors end with the provider).
    public init(configuration: WebDAVConfiguration, stateFolder: URL?) throws(FolioError) {
        client = try WebDAVClient(configuration: configuration)
        index = ItemIndex(file: stateFolder?.appendingPathComponent("webdav-index.jsonl"))
        journal = WebDAVJournal(file: stateFolder?.appendingPathComponent("webdav-journal.jsonl"))
        lockBook = WebDAVLockBook(file: stateFolder?.appendingPathComponent("webdav-locks.jsonl"))
    }

    /// Closes the connections.
    public func shutdown() async {
        await client.shutdown()
    }

    // MARK: Paths

    /// Percent-encodes one name for a path (everything but unreserved characters).
    static func encode(_ name: String) -> String {
        var allowed = CharacterSet()
        allowed.insert(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }

    /// The encoded path of the container's root collection (ending with `/`).
    func containerPath(_ container: ContainerID) -> String {
        client.configuration.basePath + Self.encode(container.rawValue) + "/"
    }

    /// The encoded path of the resource at `components` below the container's root (a folder's ends with `/`).
    func path(_ components: [String], in container: ContainerID, folder: Bool) -> String {
        let joined = components.map(Self.encode).joined(separator: "/")
        if joined.isEmpty { return containerPath(container) }
        return containerPath(container) + joined + (folder ? "/" : "")
    }

    /// The names from the container's root to `id`, or `.notFound` if the provider never saw it.
    func components(of id: ItemID?, in container: ContainerID) throws(FolioError) -> [String] {
        guard let components = index.components(of: id, in: container) else {
            throw .notFound("\(id?.rawValue ?? "root"): not known to the WebDAV provider (list its folder first)")
        }
        return components
    }

    /// The id of an item known only by its path.
    static func pathID(_ components: [String]) -> ItemID {
        ItemID("dav:" + components.joined(separator: "/"))
    }

    // MARK: Containers

    public func listContainers() async throws -> [Container] {
        let base = client.configuration.basePath
        let listing = try await propfind(base, depth: 1)
        var names: [String] = []
        for response in listing.responses {
            guard case .member(let name) = try WebDAVHref(response.href, listing: URL(string: client.configuration.url(base))!),
                response.properties.isCollection, !name.hasPrefix("."), name.contains(".")
            else { continue }
            names.append(name)
        }
        if !names.contains(ContainerID.drive.rawValue) {
            // Made only for a state that never saw the remote: a Drive missing later means the server's storage is
            // not what it was (a share not mounted behind it), and an empty stand-in would make every document
            // look deleted.
            guard journal.isNew else {
                throw FolioError.offline(
                    "the Drive collection \(containerPath(.drive)) is missing on the server: is its storage mounted? "
                        + "Nothing was changed")
            }
            let made = try await client.send("MKCOL", containerPath(.drive))
            guard WebDAVStatus.succeeded(made.status) || made.status == 405 else {
                throw WebDAVStatus.error(made.status, "MKCOL \(containerPath(.drive))")
            }
            names.append(ContainerID.drive.rawValue)
        }
        let manifest = try await readManifest()
        return names.sorted().map { name in
            let id = ContainerID(name)
            if let known = manifest.first(where: { $0.id == id }) { return known }
            return id == .drive ? .drive : Container(id: id, displayName: name, isPublic: false)
        }
    }

    /// The containers described in the manifest resource (none if it is missing or unreadable).
    private func readManifest() async throws -> [Container] {
        let reply = try await client.send("GET", client.configuration.basePath + Self.manifestName, limit: 1 << 20)
        guard reply.status == 200 else { return [] }
        return (try? JSONDecoder().decode([Container].self, from: reply.body)) ?? []
    }

    // MARK: Requests

    /// The body of every `PROPFIND`: all properties, dead ones (Folio's) included.
    static let propfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>
        """.utf8)

    /// `PROPFIND` of `path` at `depth` (0 or 1), read as a multistatus without lock-null resources; a status other
    /// than 207 is its error.
    func propfind(_ path: String, depth: Int) async throws(FolioError) -> WebDAVMultistatus {
        let reply = try await client.send(
            "PROPFIND", path, headers: [("Depth", "\(depth)"), ("Content-Type", "application/xml; charset=utf-8")],
            body: .bytes(Self.propfindBody), limit: WebDAVMultistatus.defaultLimit)
        guard reply.status == 207 else { throw WebDAVStatus.error(reply.status, "PROPFIND \(path)") }
        var listing = try WebDAVMultistatus.parse(reply.body)
        // A lock another writer's create holds on a name (Apache's lock-null resource) is no file yet.
        let count = listing.responses.count
        listing.responses.removeAll { $0.properties.isLockNull }
        if depth == 0, count > 0, listing.responses.isEmpty {
            throw FolioError.notFound("PROPFIND \(path): only a lock is there, no resource yet")
        }
        return listing
    }

    /// The properties the `PROPFIND Depth: 0` of `path` gave for `path` itself: a server that answers for another
    /// resource is a clear error, never taken for this one.
    func properties(of path: String, in listing: WebDAVMultistatus) throws(FolioError) -> WebDAVProperties {
        func normalized(_ href: String) -> String? {
            let raw = URL(string: href).flatMap { $0.scheme == nil ? nil : $0.path(percentEncoded: true) } ?? href
            let trimmed = raw.hasSuffix("/") ? String(raw.dropLast()) : raw
            return trimmed.removingPercentEncoding
        }
        let wanted = normalized(path)
        guard let response = listing.responses.first(where: { normalized($0.href) == wanted }) else {
            throw .providerFailure(
                "the server answered PROPFIND \(path) for other resources (\(listing.responses.prefix(2).map(\.href)))",
                retryable: true)
        }
        return response.properties
    }

    static func escapeXML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// What this server cannot do (``serverTraits()``, which finds it out with a probe the first time), as
    /// `folio status` says it; `nil` while the server cannot be asked.
    public func limitations() async -> [String]? {
        guard let traits = try? await serverTraits() else { return nil }
        var limitations: [String] = []
        if !traits.keepsDeadProperties {
            limitations.append(
                "the server keeps no properties: modes, times, tags and symlinks stay on this device, and an item "
                    + "renamed "
                    + "on another device or on the server is a new item here")
        }
        if !traits.honoursConditions {
            limitations.append(
                "the server ignores conditional requests: a change made there between Folio's check and its write "
                    + "(milliseconds) is overwritten")
        }
        return limitations
    }

    /// What the server does, found once per run with a probe resource beside the containers
    /// (`.folio-probe-…`, removed after): whether a `PUT` with `If-None-Match: *` over an existing resource is
    /// refused, whether a dead property is kept, and (`OPTIONS`) whether the server locks.
    func serverTraits() async throws(FolioError) -> WebDAVServerTraits {
        if let known = traits.withLock({ $0 }) { return known }
        let options = try await client.send("OPTIONS", client.configuration.basePath)
        // `DAV: 1, 2`: class 2 locks (RFC 4918 §18.2).
        let locks = WebDAVStatus.succeeded(options.status)
            && (options.header("dav") ?? "").split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces) == "2"
            }
        let probe = client.configuration.basePath + ".folio-probe-" + String(UUID().uuidString.prefix(8))
        let first = try await client.send("PUT", probe, headers: [("If-None-Match", "*")], body: .bytes(Data("1".utf8)))
        guard WebDAVStatus.succeeded(first.status) else {
            guard [403, 405, 501].contains(first.status) else {
                // Not known now (a full disk, a failing server): asked again next time, nothing assumed.
                throw WebDAVStatus.error(first.status, "PUT \(probe) (a probe of what the server does)")
            }
            // Nothing may be written beside the containers: taken to be a server that does both (the usual case).
            let assumed = WebDAVServerTraits(honoursConditions: true, keepsDeadProperties: true, locks: locks)
            traits.withLock { $0 = assumed }
            return assumed
        }
        let second = try await client.send("PUT", probe, headers: [("If-None-Match", "*")], body: .bytes(Data("2".utf8)))
        let kept = try await setProperties(["probe": "1"], at: probe)
        var keeps = false
        if kept { keeps = try await propfind(probe, depth: 0).responses.first?.properties.folio["probe"] == "1" }
        _ = try? await client.send("DELETE", probe)
        let found = WebDAVServerTraits(
            honoursConditions: second.status == 412, keepsDeadProperties: keeps, locks: locks)
        traits.withLock { $0 = found }
        return found
    }
}

/// What a WebDAV server was found to do.
struct WebDAVServerTraits: Sendable {
    /// `If-Match` and `If-None-Match` are honoured (rclone ignores them: Folio then checks with a `PROPFIND` first,
    /// which leaves a window between the two requests).
    var honoursConditions: Bool
    /// Dead properties are kept (rclone refuses them: ids then live only in the local index, and symlinks, modes,
    /// times and retry tags cannot be kept on the server).
    var keepsDeadProperties: Bool
    /// The server locks (`DAV` class 2): Folio holds a write lock on a file while it writes it
    /// (``WebDAVProvider/whileLocked(_:owner:_:)``).
    var locks: Bool
}
