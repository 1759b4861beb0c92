import FolioCore
import Foundation

extension WebDAVProvider {
    /// Adds the container to the manifest resource (`.folio-containers.json`) by a conditional `PUT` (`If-Match`
    /// its ETag, or `If-None-Match: *` when there is none yet), read again and retried when another client changed
    /// it meanwhile (two devices adding containers at once both land; an entry the manifest has is kept as it
    /// is), then makes its collection (`MKCOL`; one that exists is fine). In that order: a listing lists the
    /// collections, so it never meets the container before its description.
    public func createContainer(_ container: Container) async throws -> Container {
        let described = try await describe(container)
        let collection = containerPath(container.id)
        let made = try await client.send("MKCOL", collection)
        if WebDAVStatus.succeeded(made.status) || made.status == 405 { return described }
        // Another device's MKCOL of the same collection at the same instant: Apache answers the loser 403. What
        // counts is that the collection is there now.
        if let listing = try await existing(collection, depth: 0),
           listing.responses.first?.properties.isCollection == true {
            return described
        }
        throw WebDAVStatus.error(made.status, "MKCOL \(collection)")
    }

    /// Adds `container` to the manifest, unless it names it already; returns the entry the manifest has.
    private func describe(_ container: Container) async throws -> Container {
        let manifestPath = client.configuration.basePath + Self.manifestName
        for _ in 0..<8 {
            let reply = try await client.send("GET", manifestPath, limit: 1 << 20)
            var entries: [Container] = []
            var condition: (String, String) = ("If-None-Match", "*")
            if reply.status == 200 {
                entries = (try? JSONDecoder().decode([Container].self, from: reply.body)) ?? []
                guard let etag = reply.header("ETag") else {
                    throw FolioError.providerFailure(
                        "the server gives no ETag for \(manifestPath): containers cannot be added safely",
                        retryable: false)
                }
                // Apache's tag of a resource changed within the last second is weak, and `If-Match` never matches
                // a weak tag: it is strong a second later.
                if etag.hasPrefix("W/") {
                    try await Task.sleep(for: .milliseconds(1100))
                    continue
                }
                condition = ("If-Match", etag)
            } else if reply.status != 404 {
                throw WebDAVStatus.error(reply.status, "GET \(manifestPath)")
            }
            if let existing = entries.first(where: { $0.id == container.id }) { return existing }
            entries.append(container)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let body = try encoder.encode(entries)
            let put = try await client.send(
                "PUT", manifestPath, headers: [condition, ("Content-Type", "application/json")], body: .bytes(body))
            if WebDAVStatus.succeeded(put.status) { return container }
            guard put.status == 412 else { throw WebDAVStatus.error(put.status, "PUT \(manifestPath)") }
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...300)))
        }
        throw FolioError.busy("the container list \(manifestPath) kept changing while \(container.id) was added")
    }
}
