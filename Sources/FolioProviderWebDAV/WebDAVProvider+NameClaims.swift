import FolioCore
import Foundation

extension WebDAVProvider {
    /// How old a name claim must be (by the server's clock) before another create takes it for the leftover of a
    /// device that died holding it.
    static let claimTimeout: TimeInterval = 30

    /// Runs `body` (a create's last steps: is the name free, move the staged file there; so a claim is held for a
    /// moment only) holding the claim on the name `name` in the folder at `parentComponents`: a hidden, empty
    /// collection beside it (``claimName(_:)``) made with `MKCOL`, which a server makes for one request only (a
    /// `mkdir`). Two Folio devices creating one name at once thus take turns: the second gets `.busy`, is tried
    /// again, and then finds the name taken (`.exists`). A `MOVE` with `Overwrite: F` alone does not decide it: Apache
    /// checks the destination and renames in two steps (measured: both of two creates landed in 12 of 100 rounds).
    /// A claim older than ``claimTimeout`` is a dead device's and is taken over; a claim of this device's killed
    /// daemon is removed by the next one (kept in ``lockBook``). A server that refuses the claim (`403`) gets
    /// unclaimed creates.
    func withNameClaim<T: Sendable>(
        _ name: String, in parentComponents: [String], container: ContainerID, _ body: () async throws -> T
    ) async throws -> T {
        let claim = path(parentComponents + [Self.claimName(name)], in: container, folder: true)
        await lockRequests.serially { await self.releaseStaleLocks() }
        var reply = try await client.send("MKCOL", claim)
        if reply.status == 405 || reply.status == 403, try await isStaleClaim(claim) {
            _ = try await client.send("DELETE", claim)
            reply = try await client.send("MKCOL", claim)
        }
        if reply.status == 403, try await existing(claim, depth: 0) == nil {
            // Apache answers 403 to a `MKCOL` that raced with another one; only a second refusal with nothing
            // there is a server that allows no such name: then creates go unclaimed.
            reply = try await client.send("MKCOL", claim)
            if reply.status == 403, try await existing(claim, depth: 0) == nil { return try await body() }
        }
        switch reply.status {
        case 200..<300: break
        case 403, 405: throw FolioError.busy("\(name) is being created by another device on the server")
        default: throw WebDAVStatus.error(reply.status, "MKCOL \(claim) (the claim on a new name)")
        }
        let record = WebDAVLock(path: claim, token: WebDAVLockBook.claimToken)
        lockBook.took(record)
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        await Self.release(record, client: client, book: lockBook)
        return try result.get()
    }

    /// The hidden name of the claim on `name`: a hash (``StableHash``), so that any name fits. Two names with one
    /// hash only take turns needlessly.
    static func claimName(_ name: String) -> String {
        stagingPrefix + "claim-" + String(StableHash.fnv1a(name), radix: 16) + "-" + String(name.utf8.count)
    }

    /// Whether the claim at `claim` is older than ``claimTimeout`` by the server's own clock (its `Date`), or gone.
    private func isStaleClaim(_ claim: String) async throws(FolioError) -> Bool {
        let reply = try await client.send(
            "PROPFIND", claim, headers: [("Depth", "0"), ("Content-Type", "application/xml; charset=utf-8")],
            body: .bytes(Self.propfindBody), limit: WebDAVMultistatus.defaultLimit)
        if reply.status == 404 { return false }  // released meanwhile: the next attempt takes it
        guard reply.status == 207, let now = reply.header("date").flatMap(WebDAVProperties.httpDate),
            let made = try WebDAVMultistatus.parse(reply.body).responses.first?.properties.lastModified
        else { return false }
        return now.timeIntervalSince(made) > Self.claimTimeout
    }
}
