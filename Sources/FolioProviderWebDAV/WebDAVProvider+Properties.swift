import FolioCore
import Foundation

/// Setting Folio's dead properties (`PROPPATCH`), and telling a refusal from a success.
extension WebDAVProvider {
    /// Sets Folio's dead properties of the resource at `path`. Returns false if the server does not keep them (a
    /// server that keeps none still works: the metadata then stays local), unless they are `required` (anything sent
    /// to a server that keeps properties, ``WebDAVServerTraits/keepsDeadProperties``): then a refusal is an error,
    /// retried if it can pass. A refusal that passes or needs the user throws either way: never taken for done.
    ///
    /// A `412` is mostly the refusal of the lock this task holds (``WebDAVLock/held``): Apache can grant one
    /// exclusive lock to two `LOCK`s that arrive at once and keep only the other's (measured: 11 of 300 simultaneous
    /// pairs), and then refuses every conditional write of the lock it lost. ``refusalOfCondition(_:at:)`` tells
    /// that (`.busy`: tried again once the other writer's lock is gone) from a refusal that needs the user.
    @discardableResult
    func setProperties(
        _ properties: [String: String], at path: String, required: Bool = false
    ) async throws(FolioError) -> Bool {
        guard !properties.isEmpty else { return true }
        let values = properties.sorted { $0.key < $1.key }.map { name, value in
            "<F:\(name)>\(Self.escapeXML(value))</F:\(name)>"
        }.joined()
        let body = """
            <?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" \
            xmlns:F="\(WebDAVProperties.folioNamespace)"><D:set><D:prop>\(values)</D:prop></D:set></D:propertyupdate>
            """
        let reply = try await client.send(
            "PROPPATCH", path, headers: [("Content-Type", "application/xml; charset=utf-8")],
            body: .bytes(Data(body.utf8)))
        let what = "PROPPATCH \(path)"
        if reply.status == 412 { throw await refusalOfCondition(what, at: path) }
        // Refused for a reason that passes or needs the user (locked by another writer, out of space): an error.
        if [401, 404, 409, 423, 507].contains(reply.status) { throw WebDAVStatus.error(reply.status, what) }
        let refusal = reply.status == 207 ? Self.propertyRefusal(in: reply.body) : reply.status
        guard let refusal else { return true }
        guard required else { return false }
        switch refusal {
        case 423, 507, 429, 500..<600:
            // (rclone answers every `PROPPATCH` with a 500: only where properties are required is that a failure.)
            throw WebDAVStatus.error(refusal, what)
        default:
            throw FolioError.providerFailure(
                "\(what): the server refused to keep Folio's properties (\(refusal)) (needs you: check the server's "
                    + "WebDAV property storage, then run `folio retry PATH`)", retryable: false)
        }
    }

    /// The error a `412` to a `PROPPATCH` of `path` is. Under a lock Apache lost to another device's (its
    /// `lockdiscovery` no longer names this one: so in 36 of 36 double grants measured), `.busy`: tried again once
    /// the other writer is done. A lock that expired is named by nobody: `.busy` too, and the retry locks again.
    /// Refused under a lock the server still names, or with no lock, the condition is not the reason: that needs
    /// the user (a server or proxy that refuses every conditional `PROPPATCH` would otherwise be retried forever).
    private func refusalOfCondition(_ what: String, at path: String) async -> FolioError {
        guard let held = WebDAVLock.held, held.path == path else {
            return .providerFailure(
                "\(what): refused (412) though it named no condition (needs you: check the server or a proxy before it, "
                    + "then run `folio retry PATH`)", retryable: false)
        }
        let named = try? await Self.activeLocks(of: path, client: client).map(\.token)
        guard let named, named.contains(held.token) else {
            return .busy("\(what): refused under this device's lock (412): another device holds the file locked")
        }
        return .providerFailure(
            "\(what): refused (412) under the lock the server granted (needs you: check the server or a proxy before "
                + "it, then run `folio retry PATH`)", retryable: false)
    }

    /// The status that refused a `PROPPATCH` whose answer is the multistatus `body`, or `nil` if every property was
    /// set. A `PROPPATCH` is all or nothing (RFC 4918 §9.2): one property refused (`403` protected, `507` no room,
    /// `500`) leaves the others `424 Failed Dependency`, so the first status that is neither a success nor `424` says
    /// why (`424` if only those came).
    static func propertyRefusal(in body: Data) -> Int? {
        let text = String(decoding: body, as: UTF8.self)
        var refusal: Int?
        var rest = text[...]
        while let range = rest.range(of: "HTTP/1.") {
            rest = rest[range.upperBound...]
            // `HTTP/1.1 200 OK`: the version's last digit, a space, then the code.
            let code = rest.dropFirst(2).prefix(3)
            guard code.count == 3, let status = Int(code) else { continue }
            if (200..<300).contains(status) { continue }
            if status != 424 { return status }
            refusal = status
        }
        return refusal
    }
}
