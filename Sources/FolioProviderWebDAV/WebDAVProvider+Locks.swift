import FolioCore
import Foundation

extension WebDAVProvider {
    /// How long a lock lasts unless refreshed: what a device that dies holding one makes other writers wait.
    static let lockTimeout = 20
    /// How often a held lock is refreshed while its write goes on (a big `PUT` takes longer than the timeout).
    static let lockRefresh = Duration.seconds(5)

    /// Runs `body` holding an exclusive write lock on the file at `path`, on a server that locks and honours
    /// conditions (otherwise `body` runs without one). A file gone from the server meanwhile: a server that answers
    /// the `LOCK` of an unmapped URL with `201` made an empty file there, which is removed again if `body` fails
    /// (Apache makes a lock-null resource instead, which no listing takes for a file,
    /// ``WebDAVProperties/isLockNull``). Every writing request to `path` that `body` sends
    /// carries the lock's token; the lock is refreshed while `body` runs and released after it. A resource another
    /// writer holds locked is `.busy` (tried again later); `owner` names the writer in the lock (`lockdiscovery`).
    /// A server that grants a lock without a `Lock-Token` is taken not to lock from then on. The locks taken are
    /// kept in ``lockBook`` until released, so those of a daemon killed while writing are released by the next.
    /// `LOCK` and `UNLOCK` requests go one at a time (``lockRequests``): Apache's lock database loses records when
    /// they run at once (measured: 31 of 320 locks of existing files lost with 16 writers, none when serial).
    func whileLocked<T: Sendable>(
        _ path: String, owner: String, _ body: () async throws -> T
    ) async throws -> T {
        let traits = try await serverTraits()
        guard traits.locks, traits.honoursConditions else { return try await body() }
        // Unique, so that a lock granted to a daemon killed before the answer came is found by the next one.
        let owner = owner + " " + UUID().uuidString.prefix(8).lowercased()
        let info = """
            <?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/>\
            </D:lockscope><D:locktype><D:write/></D:locktype><D:owner>\(Self.escapeXML(owner))</D:owner></D:lockinfo>
            """
        let asked = WebDAVLockBook.asked(path, owner: owner)
        let book = lockBook
        let reply: WebDAVResponse
        do {
            reply = try await lockRequests.serially {
                await self.releaseStaleLocks()
                book.took(asked)
                return try await self.client.send(
                    "LOCK", path,
                    headers: [("Content-Type", "application/xml; charset=utf-8"),
                        ("Timeout", "Second-\(Self.lockTimeout)"), ("Depth", "0")],
                    body: .bytes(Data(info.utf8)))
            }
        } catch {
            book.releaseFailed(asked)  // granted or not: looked for by its owner later
            throw error
        }
        let token = WebDAVStatus.succeeded(reply.status) ? Self.lockToken(reply.header("lock-token")) : nil
        if let token { book.took(WebDAVLock(path: path, token: token)) }
        book.released(asked)
        if reply.status == 423 {
            throw FolioError.busy("\(path) is being written by another device (locked on the server, 423)")
        }
        guard WebDAVStatus.succeeded(reply.status) else { throw WebDAVStatus.error(reply.status, "LOCK \(path)") }
        guard let token else {
            // A lock nobody can name: this provider locks no more (the lock, if the server keeps one, times out),
            // and the write is tried again without one.
            self.traits.withLock { $0?.locks = false }
            throw FolioError.providerFailure(
                "LOCK \(path): the server granted a lock without a token; writes go on unlocked", retryable: true)
        }
        let lock = WebDAVLock(path: path, token: token)
        let created = reply.status == 201
        let client = self.client
        let gate = lockRequests
        let refresher = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.lockRefresh)
                if Task.isCancelled { break }
                _ = try? await gate.serially {
                    try await client.send(
                        "LOCK", path, headers: [("If", "(<\(token)>)"), ("Timeout", "Second-\(Self.lockTimeout)")])
                }
            }
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await WebDAVLock.$held.withValue(lock) { try await body() })
        } catch {
            result = .failure(error)
        }
        refresher.cancel()
        if case .failure = result, created {
            // The empty file this call's `LOCK` made where the file was gone: nobody's.
            _ = try? await WebDAVLock.$held.withValue(lock) { try await client.send("DELETE", path) }
        }
        await lockRequests.serially {
            await Self.release(lock, client: client, book: book)
        }
        return try result.get()
    }

    /// Releases the locks and claims an earlier run left (``releaseStaleLocks()``) before a change is sent: a
    /// file its killed predecessor held locked refuses this run's `DELETE`, `MOVE` and `PROPPATCH` too. Costs
    /// nothing once they are released.
    func releaseStaleLocksFirst() async {
        guard lockBook.hasStaleLocks else { return }
        await lockRequests.serially { await self.releaseStaleLocks() }
    }

    /// Releases the locks an earlier run took and never released (its daemon was killed while writing): they
    /// would make every writer of those files, this one included, wait until they time out.
    func releaseStaleLocks() async {
        for lock in lockBook.takeStaleLocks() {
            await Self.release(lock, client: client, book: lockBook)
        }
    }

    /// Sends the `UNLOCK` of `lock` (the `DELETE` of a name claim; for a lock whose `LOCK` was never answered, the
    /// `UNLOCK` of the lock its owner holds, found in `lockdiscovery`, if the server granted it). Any answer ends it
    /// (a lock gone or expired is refused, and released all the same); a server that could not be reached leaves it
    /// for later (``WebDAVLockBook/releaseFailed(_:)``).
    static func release(_ lock: WebDAVLock, client: WebDAVClient, book: WebDAVLockBook) async {
        do {
            if lock.token == WebDAVLockBook.claimToken {
                _ = try await client.send("DELETE", lock.path)
            } else if lock.token.hasPrefix(WebDAVLockBook.askedPrefix) {
                let owner = String(lock.token.dropFirst(WebDAVLockBook.askedPrefix.count))
                for token in try await lockTokens(of: lock.path, owner: owner, client: client) {
                    _ = try await client.send("UNLOCK", lock.path, headers: [("Lock-Token", "<\(token)>")])
                }
            } else {
                _ = try await client.send("UNLOCK", lock.path, headers: [("Lock-Token", "<\(lock.token)>")])
            }
            book.released(lock)
        } catch {
            book.releaseFailed(lock)
        }
    }

    /// The tokens of the locks on `path` that `owner` holds, from its `lockdiscovery` (none if nothing is there).
    static func lockTokens(of path: String, owner: String, client: WebDAVClient) async throws -> [String] {
        try await activeLocks(of: path, client: client).filter { $0.owner == owner }.map(\.token)
    }

    /// The locks the server names in the `lockdiscovery` of `path` (none if nothing is there).
    static func activeLocks(of path: String, client: WebDAVClient) async throws -> [WebDAVProperties.ActiveLock] {
        let reply = try await client.send(
            "PROPFIND", path, headers: [("Depth", "0"), ("Content-Type", "application/xml; charset=utf-8")],
            body: .bytes(Data(lockDiscoveryBody.utf8)), limit: WebDAVMultistatus.defaultLimit)
        guard reply.status == 207 else { return [] }
        return try WebDAVMultistatus.parse(reply.body).responses.flatMap { $0.properties.activeLocks }
    }

    private static let lockDiscoveryBody = """
        <?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop>\
        </D:propfind>
        """

    /// The token of a `Lock-Token: <opaquelocktoken:…>` header.
    static func lockToken(_ header: String?) -> String? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        let token = header.hasPrefix("<") && header.hasSuffix(">") ? String(header.dropFirst().dropLast()) : header
        return token.isEmpty ? nil : token
    }
}
