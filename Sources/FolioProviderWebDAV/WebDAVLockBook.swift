import Foundation
import Synchronization

/// The write locks a provider took and has not released yet, kept in the mount's state folder (JSON lines) so that
/// the next daemon after a `kill -9` releases the locks its predecessor held (``takeStaleLocks()``) instead of waiting
/// for them to time out: a lock of a dead writer blocks every write of its file, this device's included. Name
/// claims (``claimToken``) are kept the same way.
final class WebDAVLockBook: Sendable {
    private struct Line: Codable {
        var path: String
        var token: String
        /// The lock was released (or found gone).
        var released: Bool?
    }

    /// The token a name claim is recorded with (``WebDAVProvider/withNameClaim(_:in:container:_:)``): released
    /// with `DELETE`, not `UNLOCK`.
    static let claimToken = "folio:name-claim"

    /// What a lock is recorded with while its `LOCK` is asked for, before its token is known: this prefix and the
    /// lock's unique owner. A daemon killed before the answer came leaves it, and the next one finds the lock by its
    /// owner in the resource's `lockdiscovery` (``WebDAVProvider/release(_:client:book:)``).
    static let askedPrefix = "folio:asked "

    /// The record of a `LOCK` of `path` asked for with the unique `owner`, until its answer comes.
    static func asked(_ path: String, owner: String) -> WebDAVLock {
        WebDAVLock(path: path, token: askedPrefix + owner)
    }

    private let file: JSONLinesFile<Line>?
    /// Locks an earlier run took and never released, by path and token.
    private let stale: Mutex<[String: WebDAVLock]>

    /// A book kept in `file` (`nil`: in memory only, so no lock outlives the provider's run in it).
    init(file: URL?) {
        self.file = file.map { JSONLinesFile($0) }
        var open: [String: WebDAVLock] = [:]
        for line in self.file?.read() ?? [] {
            if line.released == true {
                open[line.path + " " + line.token] = nil
            } else {
                open[line.path + " " + line.token] = WebDAVLock(path: line.path, token: line.token)
            }
        }
        stale = Mutex(open)
        self.file?.rewrite(open.values.sorted { ($0.path, $0.token) < ($1.path, $1.token) }.map { Line(path: $0.path, token: $0.token) })
    }

    /// Records a lock this run took.
    func took(_ lock: WebDAVLock) {
        file?.append([Line(path: lock.path, token: lock.token)])
    }

    /// Records that `lock` is released (or was found gone).
    func released(_ lock: WebDAVLock) {
        stale.withLock { $0[lock.path + " " + lock.token] = nil }
        file?.append([Line(path: lock.path, token: lock.token, released: true)])
    }

    /// Records that the release of `lock`, taken by this run, failed (the server could not be reached): it is
    /// released with the earlier runs' ones.
    func releaseFailed(_ lock: WebDAVLock) {
        stale.withLock { $0[lock.path + " " + lock.token] = lock }
    }

    /// Whether locks are left to release (``takeStaleLocks()``).
    var hasStaleLocks: Bool {
        stale.withLock { !$0.isEmpty }
    }

    /// Takes the locks an earlier run took and did not release (and this run's whose release failed), to release
    /// them: none is held by a task of this run, and each is handed out once.
    func takeStaleLocks() -> [WebDAVLock] {
        stale.withLock { stale in
            defer { stale = [:] }
            return Array(stale.values)
        }
    }
}
