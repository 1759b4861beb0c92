/// An exclusive write lock (RFC 4918 §6) Folio holds on one resource while it writes it: the `PUT` of its content
/// and the `PROPPATCH` of its properties. A server that locks refuses every other writer's change of the
/// resource meanwhile (`423 Locked`), so two devices' writes of one file never overlap: the second one's
/// `If-Match` is checked only once the first one's write is whole, and it fails (a conflict) instead of replacing
/// content its writer never saw.
struct WebDAVLock: Sendable, Equatable {
    /// The encoded path of the locked resource.
    var path: String
    /// The lock token (`opaquelocktoken:…`).
    var token: String

    /// The lock the current task holds: a writing request to its path carries its token (`If: (<token>)`).
    @TaskLocal static var held: WebDAVLock?

    /// The headers a request of `method` to `path` adds for the held lock: its token, for a request that changes
    /// the locked resource; nothing otherwise.
    static func headers(_ method: String, _ path: String) -> [(String, String)] {
        guard let held, held.path == path, !["GET", "HEAD", "PROPFIND", "OPTIONS", "UNLOCK"].contains(method) else {
            return []
        }
        return [("If", "(<\(held.token)>)")]
    }
}
