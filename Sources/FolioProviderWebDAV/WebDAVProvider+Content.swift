import FolioCore
import Foundation
import SystemPackage

extension WebDAVProvider {
    /// Downloads the whole file into `destination` (created or truncated).
    public func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        let item = try await self.item(id, in: container)
        guard item.version == version else {
            throw FolioError.conflict("\(item.name) changed on the server (version \(item.version), not \(version))")
        }
        let descriptor = try SystemPackage.FileDescriptor.open(
            destination, .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
        try descriptor.close()
        if item.kind == .symlink { return item }
        try await download(item, range: 0..<item.size, to: destination, progress: progress)
        return item
    }

    /// A download writes its bytes in order from the range's start, and only once the answer's ETag was found to
    /// be the version asked for (``download(_:range:to:progress:)``): what it reported is final.
    public var reportsFinalBytesInOrder: Bool { true }

    /// Downloads the bytes `range` of the file into `destination` at their offsets.
    public func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, range: Range<Int64>, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        let item = try await knownItem(id, in: container, version: version)
        let clamped = min(range.lowerBound, item.size)..<min(range.upperBound, item.size)
        if clamped.isEmpty {
            let descriptor = try SystemPackage.FileDescriptor.open(destination, .writeOnly, options: [.create], permissions: [.ownerReadWrite])
            try descriptor.close()
            return item
        }
        let failure: FolioError
        do {
            try await download(item, range: clamped, to: destination, progress: progress)
            return item
        } catch {
            failure = error
        }
        guard case .notFound = failure else { throw failure }
        // Moved since it was listed (a rename of this device's whose answer just came, or never came): asked for
        // again where it is now, at the same version.
        let now = try await self.item(id, in: container)
        guard now.version == version else {
            throw FolioError.conflict("\(now.name) changed on the server (version \(now.version), not \(version))")
        }
        guard now.name != item.name || now.parentID != item.parentID else { throw failure }
        try await download(now, range: clamped, to: destination, progress: progress)
        return now
    }

    /// The item of the working set's last listing if it has `version` and is where the index has it, or else the
    /// server's (a ranged read of a big file asks for many ranges: one `PROPFIND` for each would double the
    /// requests). A move whose answer never came (``ItemIndex/Entry/movingTo``, a daemon killed meanwhile) is
    /// settled by asking the server: the listing may still have the item at the name it moved from.
    private func knownItem(_ id: ItemID, in container: ContainerID, version: String) async throws -> RemoteItem {
        let listed = journal.item(id, in: container)
        let entry = index.entry(id)
        let item: RemoteItem
        if let listed, listed.version == version, let entry, entry.movingTo == nil, entry.name == listed.name,
            entry.parent == listed.parentID, entry.container == container
        {
            item = listed
        } else {
            item = try await self.item(id, in: container)
        }
        guard item.version == version else {
            throw FolioError.conflict("\(item.name) changed on the server (version \(item.version), not \(version))")
        }
        return item
    }

    /// GETs `range` of `item` (its version checked against the answer's ETag),
    /// going on from where a dropped connection left off; gives up after three attempts in a row that brought
    /// nothing.
    func download(
        _ item: RemoteItem, range: Range<Int64>, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws(FolioError) {
        let parentComponents = try components(of: item.parentID, in: item.container)
        let itemPath = path(parentComponents + [item.name], in: item.container, folder: false)
        var done: Int64 = 0
        var fruitless = 0
        while done < range.count {
            let rest = (range.lowerBound + done)..<range.upperBound
            // No `If-Match`: Apache's tag of a file written in the last second is weak and would never match; the
            // answer's tag is compared instead.
            let headers: [(String, String)] = []
            let base = done
            do {
                let expected = Self.entityTag(item.version)
                let name = item.name
                let (response, written) = try await client.download(
                    itemPath, headers: headers, range: rest, to: destination,
                    accept: { answer throws(FolioError) in
                        // Checked before a byte is written: bytes of another version never reach the file.
                        if let tag = answer.header("etag"), let expected,
                            Self.weakless(Self.quoted(tag)) != Self.weakless(expected)
                        {
                            throw .conflict("\(name) changed on the server while it was read")
                        }
                    },
                    progress: { progress(base + $0) })
                guard response.status == 200 || response.status == 206 else {
                    throw WebDAVStatus.error(response.status, "GET \(itemPath)")
                }
                done += written
                if written == 0 {
                    throw FolioError.providerFailure(
                        "GET \(itemPath) ended after \(done) of \(range.count) bytes", retryable: true)
                }
                fruitless = 0
            } catch let error as WebDAVClient.PartialDownload {
                done += error.written
                fruitless = error.written > 0 ? 0 : fruitless + 1
                if fruitless >= 3 { throw error.failure }
                do { try await Task.sleep(for: WebDAVClient.backoff(attempt: fruitless)) } catch {
                    throw .interrupted("download cancelled")
                }
            } catch let error as FolioError {
                throw error
            } catch {
                throw .io("\(error)")
            }
        }
    }

    /// An ETag in quotes (wsgidav sends some without).
    static func quoted(_ tag: String) -> String {
        tag.hasPrefix("\"") || tag.hasPrefix("W/") ? tag : "\"\(tag)\""
    }

    /// An ETag without its weak prefix (`W/"x"` and `"x"` name the same content for this check).
    static func weakless(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }
}
