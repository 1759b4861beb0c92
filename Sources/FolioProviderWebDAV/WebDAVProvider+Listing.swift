import FolioCore
import Foundation

extension WebDAVProvider {
    /// One page of a folder's children. The first page lists the folder with one `PROPFIND Depth: 1`; the pages
    /// after it come from that listing (a cursor whose listing is gone is `.anchorExpired`: list again). The
    /// listing joins the working set, whose folders ``changes(in:since:)`` looks at again.
    public func enumerateFolder(
        _ folder: ItemID?, in container: ContainerID, from cursor: PageCursor?, pageSize: Int
    ) async throws -> FolderPage {
        let size = max(1, pageSize)
        let items: [RemoteItem]
        let token: String
        let offset: Int
        if let cursor {
            let parts = cursor.rawValue.split(separator: ":")
            guard parts.count == 2, let start = Int(parts[1]),
                let listing = pagedListings.withLock({ $0[String(parts[0])] })
            else { throw FolioError.anchorExpired("the listing this page continued is gone: list the folder again") }
            (items, token, offset) = (listing, String(parts[0]), start)
        } else {
            items = try await list(folder, in: container)
            token = UUID().uuidString.lowercased()
            offset = 0
        }
        let end = min(items.count, offset + size)
        let page = Array(items[min(offset, items.count)..<end])
        if end < items.count {
            pagedListings.withLock { $0[token] = items }
            return FolderPage(items: page, next: PageCursor("\(token):\(end)"))
        }
        pagedListings.withLock { _ = $0.removeValue(forKey: token) }
        return FolderPage(items: page, next: nil)
    }

    /// The children of `folder` now, in name order, recorded in the index and the working set.
    func list(_ folder: ItemID?, in container: ContainerID) async throws(FolioError) -> [RemoteItem] {
        let folderID = folder ?? .root(of: container)
        if let entry = index.entry(folderID), entry.container == container, !entry.isFolder {
            throw FolioError.notDirectory("\(entry.name) is a file")
        }
        let components = try components(of: folderID, in: container)
        let folderPath = path(components, in: container, folder: true)
        let startedAt = journal.generation(container)
        let began = ContinuousClock.now
        let listing = try await propfind(folderPath, depth: 1)
        var children: [RemoteItem] = []
        let hrefs = WebDAVHref.Listing(URL(string: client.configuration.url(folderPath))!)
        for response in listing.responses {
            let href = try hrefs.href(response.href)
            switch href {
            case .collection:
                if !response.properties.isCollection, !components.isEmpty {
                    throw FolioError.notDirectory("\(folderPath) is not a folder on the server")
                }
            case .member(let name):
                if response.status.map({ !WebDAVStatus.succeeded($0) }) ?? false { continue }
                if components.isEmpty && name == Self.manifestName { continue }
                if name.hasPrefix(Self.stagingPrefix) { continue }  // a create's file before it is whole
                children.append(
                    remoteItem(response.properties, name: name, parent: folderID, components: components,
                        container: container))
            }
        }
        let known = journal.took(listing: children, of: folderID, in: container, startedAt: startedAt)
            .sorted { $0.name < $1.name }
        let listed = Set(children.map(\.id))
        for child in known where listed.contains(child.id) && child.parentID ?? .root(of: container) == folderID {
            index.recordListed(child.id, .init(
                container: container, parent: child.parentID, name: child.name, isFolder: child.kind == .directory))
        }
        if client.configuration.freshListing > .zero {
            listingStarts.withLock { starts in starts[folderID] = max(starts[folderID] ?? began, began) }
        }
        return known
    }

    /// The item a resource's properties describe. A folder's version is its time and mode (a collection's ETag
    /// changes with its members on some servers, which is not a change of the folder).
    func remoteItem(
        _ properties: WebDAVProperties, name: String, parent: ItemID, components: [String], container: ContainerID
    ) -> RemoteItem {
        let parentID: ItemID? = parent.isContainerRoot ? nil : parent
        let id = properties.folio["id"].map { ItemID($0) }
            ?? index.id(in: container, parent: parentID, name: name) ?? Self.pathID(components + [name])
        let symlink = properties.folio["symlink"]
        let kind: ItemKind = properties.isCollection ? .directory : (symlink != nil ? .symlink : .file)
        let size = kind == .file ? (properties.contentLength ?? 0) : 0
        let modified = properties.folio["mtime"].flatMap(Self.timestamp)
            ?? properties.lastModified.map { Timestamp(seconds: Int64($0.timeIntervalSince1970), nanoseconds: 0) }
            ?? Timestamp(seconds: 0, nanoseconds: 0)
        let mode = properties.folio["mode"].flatMap { UInt32($0, radix: 8) }.map { $0 & 0o7777 }
            ?? (kind == .directory ? 0o755 : 0o644)
        var item = RemoteItem(
            id: id, container: container, parentID: parent.isContainerRoot ? nil : parent, name: name, kind: kind,
            size: size, modificationTime: modified, mode: mode, symlinkTarget: symlink,
            version: kind == .directory
                ? "folder:\(Self.text(modified)):\(String(mode, radix: 8))" : Self.version(properties, size: size))
        // No mode set through Folio (a server that keeps no properties, or a resource another client made): the
        // mode is a default and the time the server's, which do not replace what this device has.
        item.metadataKept = properties.folio["mode"] != nil
        item.tags = kind == .symlink ? nil : Self.tags(in: properties)
        return item
    }

    /// A file's version: its ETag (or its modification time and size where the server sends none), followed by
    /// the revision Folio's last write through this provider left (`folio:rev`), if any, after a space (which no
    /// ETag holds). The revision tells apart two writes a server's ETag does not (wsgidav's, made of inode, second
    /// and size, stays the same for a same-size write within a second).
    static func version(_ properties: WebDAVProperties, size: Int64) -> String {
        baseVersion(properties, size: size) + (properties.folio["rev"].map { " " + $0 } ?? "")
    }

    /// The ETag in `version`, for `If-Match` (`nil` if the version has none).
    static func strongTag(_ version: String) -> String? {
        let tag = String(version.prefix { $0 != " " })
        return tag.hasPrefix("\"") ? tag : nil
    }

    /// The ETag in `version`, if the version has one.
    static func entityTag(_ version: String) -> String? {
        let tag = String(version.prefix { $0 != " " })
        return tag.hasPrefix("lm:") ? nil : tag
    }

    /// A file's ETag as sent (quoted if the server did not), or its modification time and size.
    static func baseVersion(_ properties: WebDAVProperties, size: Int64) -> String {
        if let tag = properties.entityTag, !tag.isEmpty {
            // Some servers (wsgidav) send the tag unquoted: quoted, it is what `If-Match` takes. A weak tag is taken
            // as its strong form: Apache marks a file's tag weak for its first second and strong after, which is
            // not a change (see ``WebDAVProvider/send(_:_:headers:body:ifAt:)`` for `If-Match` meanwhile).
            return weakless(quoted(tag))
        }
        let seconds = properties.lastModified.map { Int64($0.timeIntervalSince1970) } ?? 0
        return "lm:\(seconds):\(size)"
    }

    /// `SECONDS.NANOSECONDS` as a timestamp.
    static func timestamp(_ text: String) -> Timestamp? {
        let parts = text.split(separator: ".")
        guard let seconds = Int64(parts.first ?? ""), parts.count <= 2 else { return nil }
        let nanoseconds = parts.count == 2 ? Int64(parts[1]) ?? 0 : 0
        guard (0..<1_000_000_000).contains(nanoseconds) else { return nil }
        return Timestamp(seconds: seconds, nanoseconds: nanoseconds)
    }

    /// A timestamp as `SECONDS.NANOSECONDS`.
    static func text(_ time: Timestamp) -> String { "\(time.seconds).\(time.nanoseconds)" }

    /// The item `id` as the server has it now (`PROPFIND Depth: 0`).
    public func item(_ id: ItemID, in container: ContainerID) async throws -> RemoteItem {
        guard let entry = try await settledEntry(id), entry.container == container else {
            throw FolioError.notFound("\(id): not known to the WebDAV provider")
        }
        return try await currentItem(id, entry: entry)
    }

    /// The item at the place `entry` says, as the server has it now.
    func currentItem(_ id: ItemID, entry: ItemIndex.Entry) async throws(FolioError) -> RemoteItem {
        let parent = entry.parent ?? .root(of: entry.container)
        let parentComponents = try components(of: parent, in: entry.container)
        let itemPath = path(parentComponents + [entry.name], in: entry.container, folder: entry.isFolder)
        let listing = try await propfind(itemPath, depth: 0)
        let item = remoteItem(
            try properties(of: itemPath, in: listing), name: entry.name, parent: parent, components: parentComponents,
            container: entry.container)
        if item.id != id {
            throw FolioError.notFound("\(id): another item is at \(itemPath) now")
        }
        return item
    }
}
