import FolioCore
import Foundation
import SystemPackage

extension WebDAVProvider {
    /// Creates a folder (`MKCOL`) or a file (`PUT` with `If-None-Match: *`, streamed from `contents`), then sets
    /// its id, mode and time as dead properties. Something already at the name is this create's own earlier
    /// attempt if it carries the id (its content is replaced only if it is still what the attempt wrote), and
    /// otherwise a `.conflict`: nothing on the server is overwritten.
    public func createItem(_ template: RemoteItemTemplate, contents: FilePath?) async throws -> RemoteItem {
        try Self.checkName(template.name)
        await releaseStaleLocksFirst()
        let container = template.container
        let parentComponents = try components(of: template.parentID, in: container)
        let isFolder = template.kind == .directory
        let itemPath = path(parentComponents + [template.name], in: container, folder: isFolder)
        switch template.kind {
        case .directory:
            return try await makeNewFolder(template, at: itemPath, parentComponents: parentComponents)
        case .file, .symlink:
            let traits = try await serverTraits()
            if template.kind == .symlink, !traits.keepsDeadProperties {
                throw FolioError.notSupported(
                    "\(template.name): this WebDAV server keeps no properties, so it cannot keep a symlink")
            }
            let body = try self.body(kind: template.kind, contents: contents, symlinkTarget: template.symlinkTarget)
            // Not under a lock: Apache's lock database loses records when `LOCK`s of new names (lock-null
            // resources) and the `PUT`s that fill them run at once (measured: 193 of 320 `PUT`s refused on their own
            // token with 16 writers). A claim on the name (`MKCOL`) decides which of two devices creating one name
            // at once goes first; the other's then finds the name taken: `.exists`.
            return try await writeNewFile(template, at: itemPath, parentComponents: parentComponents, body: body)
        default:
            throw FolioError.notSupported("\(template.name): a WebDAV remote keeps files, folders and symlinks only")
        }
    }

    /// The part of ``createItem(_:contents:)`` that makes a folder, staged as a file is (``writeNewFile``): made
    /// under its hidden name (`MKCOL`), given its id and properties there, and moved to its name under the claim on
    /// it. A daemon killed between the `MKCOL` and the properties leaves a hidden folder the retry takes up (or the
    /// delete removes), never a folder at the name without its id, which nobody could tell from another device's.
    private func makeNewFolder(
        _ template: RemoteItemTemplate, at itemPath: String, parentComponents: [String]
    ) async throws -> RemoteItem {
        let staging = path(parentComponents + [Self.stagingName(template.id)], in: template.container, folder: true)
        let found: WebDAVMultistatus?
        do {
            found = try await existing(itemPath, depth: 0)
        } catch {
            // A file at the name (Apache answers the `PROPFIND` of a file's name with a slash with 400).
            if (try? await existing(String(itemPath.dropLast()), depth: 0)) != nil {
                throw FolioError.exists("\(template.name) already exists on the server")
            }
            throw error
        }
        if let found {
            // This create's earlier attempt that got as far as the move (it carries the id), or someone else's.
            try await requireOwnEarlierAttempt(template, at: itemPath, in: found, staging: staging)
            return try await claim(template, at: itemPath, revision: nil, putTag: nil)
        }
        var place = ItemIndex.Entry(
            container: template.container, parent: template.parentID, name: template.name, isFolder: true,
            staged: true)
        index.record(template.id, place)
        let made = try await client.send("MKCOL", staging)
        // 405: made by an earlier attempt (a hidden name of this item's own); its properties are set again.
        guard WebDAVStatus.succeeded(made.status) || made.status == 405 else {
            throw WebDAVStatus.error(made.status, "MKCOL \(staging)")
        }
        try await setProperties(
            try await newItemProperties(template, at: staging, revision: nil, putTag: nil), at: staging,
            required: try await serverTraits().keepsDeadProperties)
        try await moveIntoPlace(template, from: staging, to: itemPath, parentComponents: parentComponents)
        place.staged = nil
        index.record(template.id, place)
        let item = try await currentItem(template.id, entry: place)
        noteOwnFolder(item)
        return item
    }

    /// The part of ``createItem(_:contents:)`` that writes a file. The content goes to a hidden name beside the
    /// place (``stagingName(_:)``, which no listing shows), gets the item's properties there, and is moved to its
    /// name with `Overwrite: F` once whole, under the claim on the name (``withNameClaim(_:in:container:_:)``): a
    /// file never appears at its name without its id, so a daemon killed at any point leaves either nothing there
    /// or the whole item (a staged file its retry or its delete removes), and a name another client took meanwhile
    /// is `.exists`, never overwritten.
    private func writeNewFile(
        _ template: RemoteItemTemplate, at itemPath: String, parentComponents: [String], body: WebDAVClient.Body
    ) async throws -> RemoteItem {
        var place = ItemIndex.Entry(
            container: template.container, parent: template.parentID, name: template.name, isFolder: false)
        let staging = path(parentComponents + [Self.stagingName(template.id)], in: template.container, folder: false)
        try await moveEarlierAttempt(template, to: itemPath, parentComponents: parentComponents)
        if let found = try await existing(itemPath, depth: 0) {
            // An earlier attempt of this create that got as far as the move, or someone else's file.
            let earlier: (version: String, hasID: Bool)
            do {
                earlier = try await requireOwnEarlierAttempt(template, at: itemPath, in: found, staging: staging)
            } catch let error as FolioError {
                if case .exists = error, index.entry(template.id)?.staged == true {
                    // What an earlier attempt staged (it was refused the claim, or killed) is nobody's now.
                    _ = try? await client.send("DELETE", staging)
                    index.remove(template.id)
                }
                throw error
            }
            return try await completeEarlierAttempt(
                template, at: itemPath, version: earlier.version, hasID: earlier.hasID, body: body)
        }
        let revision: String
        let putTag: String?
        if let staged = try await stagedEarlier(template, at: staging, body: body) {
            (revision, putTag) = staged  // an earlier attempt staged these very bytes: only the move is left
        } else {
            place.staged = true
            index.record(template.id, place)
            let reply = try await client.send("PUT", staging, body: body)
            guard WebDAVStatus.succeeded(reply.status) else { throw WebDAVStatus.error(reply.status, "PUT \(staging)") }
            var tag = reply.header("etag").map { Self.weakless(Self.quoted($0)) }
            if tag == nil, let found = try await existing(staging, depth: 0) {
                tag = Self.baseVersion(try properties(of: staging, in: found), size: 0)  // Apache's 201 has none
            }
            revision = Self.newRevision()
            putTag = tag
            try await setProperties(
                try await newItemProperties(template, at: staging, revision: revision, putTag: putTag), at: staging,
                required: try await serverTraits().keepsDeadProperties)
        }
        try await moveIntoPlace(template, from: staging, to: itemPath, parentComponents: parentComponents)
        place.staged = nil
        index.record(template.id, place)
        var item: RemoteItem
        do {
            item = try await currentItem(template.id, entry: place)
        } catch {
            // Another client's file replaced this one right after the move (a server's check of `Overwrite: F`
            // and its rename are not one step): the name was taken.
            guard case .notFound = error else { throw error }
            index.remove(template.id)
            throw FolioError.exists("\(template.name) was taken on the server at the same moment")
        }
        item.version = versionWritten(item.version, revision: revision, putTag: putTag)
        noteOwnChange(item)
        return item
    }

    /// An earlier attempt of this create, stopped (a daemon killed) after its `MOVE` landed and before it was
    /// recorded, put the file at the name the item had then; the document was renamed here since, so the retry comes
    /// with another name. The file there (it carries the item's id) is moved to the new name, where the retry takes
    /// it up as its own; otherwise the retry would write a second file and leave the first behind for good. A new
    /// name taken meanwhile is `.exists`.
    private func moveEarlierAttempt(
        _ template: RemoteItemTemplate, to itemPath: String, parentComponents: [String]
    ) async throws {
        // Not only while marked staged: a listing that found the moved file recorded its place as listed.
        guard let earlier = index.entry(template.id), earlier.container == template.container, !earlier.isFolder,
            earlier.parent != template.parentID || earlier.name != template.name,
            let earlierParent = try? components(of: earlier.parent, in: earlier.container)
        else { return }
        let earlierPath = path(earlierParent + [earlier.name], in: earlier.container, folder: false)
        guard let found = try await existing(earlierPath, depth: 0),
            try properties(of: earlierPath, in: found).folio["id"] == template.id.rawValue
        else { return }
        try await withNameClaim(template.name, in: parentComponents, container: template.container) {
            let moved = try await client.send(
                "MOVE", earlierPath, headers: [("Destination", client.configuration.url(itemPath)), ("Overwrite", "F")])
            if moved.status == 412 { throw FolioError.exists("\(template.name) already exists on the server") }
            guard WebDAVStatus.succeeded(moved.status) else { throw WebDAVStatus.error(moved.status, "MOVE \(earlierPath)") }
        }
        var place = earlier
        (place.parent, place.name) = (template.parentID, template.name)
        index.record(template.id, place)  // still staged: the retry takes the file at its name as its own
    }

    /// Moves a new item made under its hidden name (`staging`) to its name (`MOVE`, `Overwrite: F`), under the claim
    /// on the name, so that two devices creating it at once take turns (a server's check of `Overwrite: F` and its
    /// rename are two steps); a name taken is looked at first, on any server. Taken: what was staged is removed,
    /// and `.exists`.
    private func moveIntoPlace(
        _ template: RemoteItemTemplate, from staging: String, to itemPath: String, parentComponents: [String]
    ) async throws {
        let isFolder = template.kind == .directory
        try await withNameClaim(template.name, in: parentComponents, container: template.container) {
            var taken = try await isTaken(itemPath, folder: isFolder)
            if !taken {
                if var staged = index.entry(template.id) {
                    staged.movingIn = true  // until the create records its place (a kill, a lost answer: the retry)
                    index.record(template.id, staged)
                }
                let moved = try await client.send(
                    "MOVE", staging, headers: [("Destination", client.configuration.url(itemPath)), ("Overwrite", "F")])
                if !WebDAVStatus.succeeded(moved.status) {
                    taken = moved.status == 412
                    if !taken { taken = (try? await isTaken(itemPath, folder: isFolder)) ?? false }
                    if !taken { throw WebDAVStatus.error(moved.status, "MOVE \(staging)") }
                }
            }
            if taken {
                _ = try? await client.send("DELETE", staging)
                index.remove(template.id)
                throw FolioError.exists("\(template.name) already exists on the server")
            }
        }
    }

    /// Whether something is at `itemPath`: for a folder's path, a file or a folder at the name (Apache answers the
    /// `PROPFIND` of a file's name with a slash with 400, and a folder moved onto a file with 400, not 412).
    private func isTaken(_ itemPath: String, folder: Bool) async throws -> Bool {
        guard folder else { return try await existing(itemPath, depth: 0) != nil }
        if (try? await existing(itemPath, depth: 0)) != nil { return true }
        return (try? await existing(String(itemPath.dropLast()), depth: 0)) != nil
    }

    /// The revision and tag of the file an earlier attempt of this create staged at `staging`, if it is whole: its
    /// properties set by that attempt (the item's id, its writer's tag still matching) and exactly the bytes of
    /// `body` (the document may have changed since). Then it is moved in as it is, not sent again.
    private func stagedEarlier(
        _ template: RemoteItemTemplate, at staging: String, body: WebDAVClient.Body
    ) async throws -> (revision: String, putTag: String)? {
        guard let tag = template.retryTag, index.entry(template.id)?.staged == true,
            let found = try await existing(staging, depth: 0)
        else { return nil }
        let properties = try properties(of: staging, in: found)
        let size = properties.contentLength ?? 0
        guard properties.folio["id"] == template.id.rawValue, let revision = properties.folio["rev"],
            Self.isOwnWrite(properties, tag: tag, version: Self.version(properties, size: size)),
            try await holds(staging, size: size, sameAs: body)
        else { return nil }
        return (revision, Self.baseVersion(properties, size: size))
    }

    /// The hidden name a create of item `id` writes its file under before moving it to its name: a dot name no
    /// listing shows, one per item, so a retry writes the same one again and a delete knows where to look.
    static func stagingName(_ id: ItemID) -> String {
        stagingPrefix + id.rawValue.replacingOccurrences(of: "/", with: "_")
    }

    /// How staged names begin (``stagingName(_:)``).
    static let stagingPrefix = ".folio-new-"

    /// Finishes a create whose earlier attempt's file is at its name already (`version` now): nothing is sent if it
    /// holds the bytes of `body` (but its properties, if it lost them: `hasID` false); otherwise they replace it, on
    /// the condition that it is still at `version`.
    private func completeEarlierAttempt(
        _ template: RemoteItemTemplate, at itemPath: String, version: String, hasID: Bool, body: WebDAVClient.Body
    ) async throws -> RemoteItem {
        let entry = ItemIndex.Entry(
            container: template.container, parent: template.parentID, name: template.name, isFolder: false)
        index.record(template.id, entry)
        let landed = try await currentItem(template.id, entry: entry)
        if try await holds(itemPath, size: landed.size, sameAs: body) {
            if !hasID { return try await claim(template, at: itemPath, revision: Self.newRevision(), putTag: version) }
            noteOwnChange(landed)
            return landed  // the earlier attempt landed whole: nothing to send again
        }
        let again = try await send("PUT", itemPath, body: body, ifAt: version)
        if again.status == 412 { throw FolioError.conflict("\(template.name) changed on the server meanwhile") }
        guard WebDAVStatus.succeeded(again.status) else { throw WebDAVStatus.error(again.status, "PUT \(itemPath)") }
        let putTag = again.header("etag").map { Self.weakless(Self.quoted($0)) }
        return try await claim(template, at: itemPath, revision: Self.newRevision(), putTag: putTag)
    }

    /// The properties a new item gets: its id, mode and time, and for a file with content the revision
    /// `revision` and its writer's tag.
    private func newItemProperties(
        _ template: RemoteItemTemplate, at itemPath: String, revision: String?, putTag: String?
    ) async throws(FolioError) -> [String: String] {
        var properties = [
            "id": template.id.rawValue, "mode": String(template.mode & 0o7777, radix: 8),
            "mtime": Self.text(template.modificationTime),
        ]
        if template.kind == .symlink { properties["symlink"] = template.symlinkTarget ?? "" }
        if let revision {
            properties["rev"] = revision
            if let tag = template.retryTag {
                properties["tag"] = try await writerTag(tag, at: itemPath, revision: revision, putTag: putTag)
            }
        }
        return properties
    }

    /// Sets a new item's id, mode and time (and for a file the revision `revision` and its writer's tag) on the
    /// resource at `itemPath`, records it in the index and answers it.
    private func claim(
        _ template: RemoteItemTemplate, at itemPath: String, revision: String?, putTag: String?
    ) async throws -> RemoteItem {
        let properties = try await newItemProperties(template, at: itemPath, revision: revision, putTag: putTag)
        try await setProperties(properties, at: itemPath, required: try await serverTraits().keepsDeadProperties)
        let isFolder = template.kind == .directory
        let entry = ItemIndex.Entry(
            container: template.container, parent: template.parentID, name: template.name, isFolder: isFolder)
        index.record(template.id, entry)
        var item = try await currentItem(template.id, entry: entry)
        if let revision { item.version = versionWritten(item.version, revision: revision, putTag: putTag) }
        if isFolder { noteOwnFolder(item) } else { noteOwnChange(item) }
        return item
    }

    /// The resource at `itemPath` (`listing`, its `PROPFIND`, if made already) is this create's own earlier
    /// attempt (it carries the template's id and, for a file, still the content that attempt wrote): returns its
    /// version, and whether it carries the id; otherwise `.exists` (someone else's), or `.conflict` (changed since the
    /// attempt: its writer's tag says so; a file that lost its properties has none to say it). On a server that
    /// keeps no properties, the id is the one the index recorded at the place, or the item's whose file was staged
    /// (`staging`) and is gone from there: moved in by the attempt's `MOVE` (``ItemIndex/Entry/movingIn``), which was
    /// stopped before it recorded it. So is a file of no id on a server that keeps properties, found where such a
    /// `MOVE` went: Apache's renames first and moves the properties after, and a server killed between the two leaves
    /// just that. A file of no id at the name of a create that sent no `MOVE` is someone else's.
    @discardableResult
    private func requireOwnEarlierAttempt(
        _ template: RemoteItemTemplate, at itemPath: String, in listing: WebDAVMultistatus? = nil,
        staging: String? = nil
    ) async throws -> (version: String, hasID: Bool) {
        var found = listing
        if found == nil { found = try await propfind(itemPath, depth: 0) }
        guard let listing = found else { throw FolioError.notFound(itemPath) }
        let properties = try self.properties(of: itemPath, in: listing)
        var recorded = index.id(in: template.container, parent: template.parentID, name: template.name)
        // A listing gives a file of no id one made of its path: that is no other item's claim on it.
        let pathID = Self.pathID(try components(of: template.parentID, in: template.container) + [template.name])
        if properties.folio["id"] == nil, recorded == nil || recorded == pathID, let staging,
            let entry = index.entry(template.id), entry.staged == true, entry.movingIn == true,
            entry.container == template.container, entry.parent == template.parentID, entry.name == template.name,
            try await existing(staging, depth: 0) == nil
        {
            recorded = template.id
        }
        guard (properties.folio["id"].map { ItemID($0) } ?? recorded) == template.id else {
            throw FolioError.exists("\(template.name) already exists on the server")
        }
        // (A file that lost its properties to a server killed mid-`MOVE` has no writer's tag either; on a server that
        // keeps none, a missing tag is all there is, and the retry takes it for a change: a conflict, nothing lost.)
        let hasID = properties.folio["id"] != nil
        let lostProperties = hasID ? false : try await serverTraits().keepsDeadProperties
        if template.kind != .directory, !lostProperties, let tag = template.retryTag,
            !Self.isOwnWrite(properties, tag: tag, version: Self.version(properties, size: properties.contentLength ?? 0))
        {
            throw FolioError.conflict("\(template.name) was changed on the server after an earlier attempt")
        }
        return (Self.version(properties, size: properties.contentLength ?? 0), hasID)
    }

    /// What a `PUT` of this kind of item sends.
    private func body(kind: ItemKind, contents: FilePath?, symlinkTarget: String?) throws -> WebDAVClient.Body {
        if kind == .symlink { return .bytes(Data((symlinkTarget ?? "").utf8)) }
        guard let contents else { return .bytes(Data()) }
        return .file(contents)
    }

    /// Moves and renames (`MOVE` with `Overwrite: F`), replaces content (`PUT` with `If-Match` of `baseVersion`,
    /// or of the version `changes.retryTag` wrote), and sets mode and time. A content change against another
    /// version is a `.conflict`; a name taken at the destination is `.exists`.
    public func modifyItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?
    ) async throws -> RemoteItem {
        if let name = changes.name { try Self.checkName(name) }
        await releaseStaleLocksFirst()
        guard var entry = try await settledEntry(id), entry.container == container else {
            throw FolioError.notFound("\(id): not known to the WebDAV provider")
        }
        let old = (id: id, parent: entry.parent)
        var current = try await currentItem(id, entry: entry)
        let destinationContainer = changes.container ?? container
        let destinationParent = changes.parentID ?? entry.parent
        let destinationName = changes.name ?? entry.name
        if destinationContainer != container || destinationParent != entry.parent || destinationName != entry.name {
            let from = path(try components(of: entry.parent, in: container) + [entry.name], in: container,
                folder: entry.isFolder)
            let to = path(
                try components(of: destinationParent, in: destinationContainer) + [destinationName],
                in: destinationContainer, folder: entry.isFolder)
            var moving = entry
            moving.movingTo = .init(container: destinationContainer, parent: destinationParent, name: destinationName)
            index.record(id, moving)  // until the answer says whether it landed (a kill: ``settledEntry(_:)``)
            let reply = try await client.send(
                "MOVE", from, headers: [("Destination", client.configuration.url(to)), ("Overwrite", "F")])
            if !WebDAVStatus.succeeded(reply.status) { index.record(id, entry) }  // answered: it did not
            if reply.status == 412 { throw FolioError.exists("\(destinationName) already exists on the server") }
            if !WebDAVStatus.succeeded(reply.status) {
                // Some servers answer a taken destination otherwise (Apache: 400 for a folder onto a file).
                if (try? await existing(to, depth: 0)) != nil {
                    throw FolioError.exists("\(destinationName) already exists on the server")
                }
                let other = to.hasSuffix("/") ? String(to.dropLast()) : to + "/"
                if (try? await existing(other, depth: 0)) != nil {
                    throw FolioError.exists("\(destinationName) already exists on the server")
                }
            }
            guard WebDAVStatus.succeeded(reply.status) else { throw WebDAVStatus.error(reply.status, "MOVE \(from)") }
            let movedAcross = destinationContainer != entry.container
            entry = .init(container: destinationContainer, parent: destinationParent, name: destinationName,
                isFolder: entry.isFolder, pendingWrite: entry.pendingWrite)
            index.record(id, entry)
            if movedAcross, entry.isFolder { index.moveDescendants(of: id, to: destinationContainer) }
        }
        let itemPath = path(try components(of: entry.parent, in: entry.container) + [entry.name],
            in: entry.container, folder: entry.isFolder)
        // (Tags are read and merged under the item's lock too, a folder's included: another device's update of them
        // is never lost.)
        let locks = current.kind == .file ? contents != nil || changes.tags != nil
            : current.kind == .directory && changes.tags != nil
        if locks {
            current = try await whileLocked(itemPath, owner: changes.retryTag ?? "folio") {
                try await self.write(
                    id, at: itemPath, entry: entry, current: current, baseVersion: baseVersion, changes: changes,
                    contents: contents)
            }
        } else {
            current = try await write(
                id, at: itemPath, entry: entry, current: current, baseVersion: baseVersion, changes: changes,
                contents: nil)
        }
        if entry.container != container { journal.deleted(id, in: container) }
        noteOwnChange(current, replacing: old)
        return current
    }

    /// The part of ``modifyItem(_:in:baseVersion:changes:contents:)`` that writes the item where it now is: its
    /// content (`PUT` on the condition that it is still at `baseVersion`, or at what this writer's earlier attempt
    /// wrote), then its properties. Answers the item as the server has it after.
    private func write(
        _ id: ItemID, at itemPath: String, entry: ItemIndex.Entry, current: RemoteItem, baseVersion: String,
        changes: RemoteItemChanges, contents: FilePath?
    ) async throws -> RemoteItem {
        var properties: [String: String] = ["id": id.rawValue]
        var putTag: String?
        var revision: String?
        if let contents, current.kind == .file {
            _ = try await serverTraits()
            var expected = baseVersion
            if current.version != baseVersion {
                let found = try self.properties(of: itemPath, in: try await propfind(itemPath, depth: 0))
                var own = false
                if let retryTag = changes.retryTag {
                    own = Self.isOwnWrite(found, tag: retryTag, version: current.version)
                    if !own { own = try await isPendingOwnWrite(id, found, tag: retryTag, at: itemPath) }
                    if !own { own = try await isUnrecordedOwnWrite(found, at: itemPath, base: baseVersion, of: contents) }
                }
                guard own else {
                    throw FolioError.conflict("\(entry.name) changed on the server (\(current.version), not \(baseVersion))")
                }
                expected = current.version  // this writer's own earlier attempt
            }
            if let retryTag = changes.retryTag { recordPendingWrite(id, entry: entry, tag: retryTag, contents: contents) }
            let reply = try await send("PUT", itemPath, body: .file(contents), ifAt: expected)
            if reply.status == 412 { throw FolioError.conflict("\(entry.name) changed on the server meanwhile") }
            guard WebDAVStatus.succeeded(reply.status) else { throw WebDAVStatus.error(reply.status, "PUT \(itemPath)") }
            putTag = reply.header("etag").map { Self.weakless(Self.quoted($0)) }
            if let retryTag = changes.retryTag {
                if putTag == nil, let found = try await existing(itemPath, depth: 0) {
                    putTag = Self.baseVersion(try self.properties(of: itemPath, in: found), size: 0)  // Apache's 204 has none
                }
                if let putTag {
                    var pending = entry
                    pending.pendingWrite = retryTag + " " + putTag
                    index.record(id, pending)  // until the properties below are set
                }
            }
            let written = Self.newRevision()
            revision = written
            properties["rev"] = written
            if let tag = changes.retryTag {
                properties["tag"] = try await writerTag(tag, at: itemPath, revision: written, putTag: putTag)
            }
        }
        if let mode = changes.mode { properties["mode"] = String(mode & 0o7777, radix: 8) }
        if let time = changes.modificationTime { properties["mtime"] = Self.text(time) }
        if let tags = changes.tags, current.kind != .symlink, let merged = try await mergedTags(tags, at: itemPath) {
            properties[Self.tagsProperty] = merged
        }
        // (On a server that keeps properties, a refusal of them is never taken for done: the tags would be lost, and
        // the revision that tells this writer's content from another's.)
        try await setProperties(properties, at: itemPath, required: try await serverTraits().keepsDeadProperties)
        var settled = entry
        if revision != nil { settled.pendingWrite = nil }  // this write's properties are set
        index.record(id, settled)
        var item = try await currentItem(id, entry: settled)
        if let revision {
            item.version = versionWritten(item.version, revision: revision, putTag: putTag)
        } else if item.kind == .file, item.version != baseVersion {
            item.changedElsewhere = try await isChangedElsewhere(id, at: itemPath, version: item.version, changes)
        }
        return item
    }

    /// Whether the file at `itemPath`, answered at `version` (not the base) after a change without content, was
    /// written by another writer since the base: said in the answer, so the caller never takes that content for its.
    /// Judged after the write, under the file's lock if it took one (another writer's `PUT` may land while a change
    /// waits for the lock, after a look before it found the base); not this writer's own earlier attempt (its retry
    /// tag's). A look that fails says "changed elsewhere": the content is then fetched again, never assumed.
    private func isChangedElsewhere(
        _ id: ItemID, at itemPath: String, version: String, _ changes: RemoteItemChanges
    ) async throws(FolioError) -> Bool {
        guard let retryTag = changes.retryTag,
            let found = try? self.properties(of: itemPath, in: try await propfind(itemPath, depth: 0))
        else { return true }
        if Self.isOwnWrite(found, tag: retryTag, version: version) { return false }
        return !((try? await isPendingOwnWrite(id, found, tag: retryTag, at: itemPath)) ?? false)
    }

    /// Whether the file `found` at `itemPath` is what a replacement of the version `base` with `contents` leaves when
    /// its daemon is killed while the `PUT` runs (it landed, nothing recorded it): the properties still of `base`
    /// (its `folio:rev`), and exactly the bytes of `contents`. Another client's write of those same bytes would be
    /// the same file.
    private func isUnrecordedOwnWrite(
        _ found: WebDAVProperties, at itemPath: String, base: String, of contents: FilePath
    ) async throws(FolioError) -> Bool {
        let parts = base.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let revision = found.folio["rev"], revision == parts[1], !found.isCollection else {
            return false
        }
        return try await holds(itemPath, size: found.contentLength ?? -1, sameAs: .file(contents))
    }

    /// Whether the file `found` (the properties of item `id`) is at the content a replacement by the writer `tag`
    /// left when its daemon was killed between the `PUT` and the properties (``ItemIndex/Entry/pendingWrite``).
    /// Before the answer to the `PUT` came, the record holds `<retry tag> ~<size>:<digest>` of the bytes sent
    /// (``contentDigest(of:)``): a file at `path` of exactly those bytes is then the writer's own too (a daemon
    /// killed while the `PUT` ran, after it landed).
    private func isPendingOwnWrite(
        _ id: ItemID, _ found: WebDAVProperties, tag: String, at path: String
    ) async throws(FolioError) -> Bool {
        guard let pending = index.entry(id)?.pendingWrite else { return false }
        if pending == tag + " " + Self.baseVersion(found, size: found.contentLength ?? 0) { return true }
        guard pending.hasPrefix(tag + " ~"), !found.isCollection, let size = found.contentLength,
            pending == tag + " ~\(size):" + (pending.split(separator: ":").last.map(String.init) ?? ""),
            size <= Self.digestLimit
        else { return false }
        let remote = try await client.send("GET", path, limit: Int(Self.digestLimit))
        return remote.status == 200 && pending == tag + " ~\(size):" + Self.contentDigest(of: remote.body)
    }

    /// The largest content whose digest is kept before a replacement's `PUT` (a bigger one cut short by a kill is
    /// a conflict for its retry, both versions kept).
    static let digestLimit: Int64 = 16 << 20

    /// A digest of `data` to tell "the bytes this writer sent" from others: 64-bit FNV-1a (``StableHash``), in hex.
    /// Not a defence against a forger, who could as well write the file; a fast check of a write cut short.
    static func contentDigest(of data: Data) -> String {
        String(StableHash.fnv1a(bytes: data), radix: 16)
    }

    /// Records, before a replacement's `PUT` of `contents` by the writer `tag`, the size and digest of what it sends
    /// (up to ``digestLimit``), so that the next daemon after a kill tells the landed bytes for this writer's.
    private func recordPendingWrite(_ id: ItemID, entry: ItemIndex.Entry, tag: String, contents: FilePath) {
        var info = stat()
        guard stat(contents.string, &info) == 0, Int64(info.st_size) <= Self.digestLimit,
            let data = FileManager.default.contents(atPath: contents.string)
        else { return }
        var pending = entry
        pending.pendingWrite = tag + " ~\(data.count):" + Self.contentDigest(of: data)
        index.record(id, pending)
    }

    /// The index entry of `id`, with a move whose answer never came (``ItemIndex/Entry/movingTo``) settled: the
    /// item is at the destination if the resource there carries its id (or, if it carries no id, if its old place is
    /// empty and the destination is not: a server that keeps no properties, or one killed mid-`MOVE`, whose
    /// resource gets its id again, though not its mode and time), and where it was otherwise.
    func settledEntry(_ id: ItemID) async throws(FolioError) -> ItemIndex.Entry? {
        guard var entry = index.entry(id), let destination = entry.movingTo else { return index.entry(id) }
        entry.movingTo = nil
        let from = path(try components(of: entry.parent, in: entry.container) + [entry.name], in: entry.container,
            folder: entry.isFolder)
        let to = path(try components(of: destination.parent, in: destination.container) + [destination.name],
            in: destination.container, folder: entry.isFolder)
        var moved = false
        if let found = try await existing(to, depth: 0) {
            if let there = try properties(of: to, in: found).folio["id"] {
                moved = there == id.rawValue
            } else {
                // No id there: a server that keeps no properties, or one killed mid-`MOVE` (Apache renames first
                // and moves the properties after). The old place empty says the move landed; the id is set again.
                moved = try await existing(from, depth: 0) == nil
                if moved, try await serverTraits().keepsDeadProperties {
                    try await setProperties(["id": id.rawValue], at: to, required: true)
                }
            }
        }
        if moved {
            let across = destination.container != entry.container
            (entry.container, entry.parent, entry.name) = (destination.container, destination.parent, destination.name)
            index.record(id, entry)
            if across, entry.isFolder { index.moveDescendants(of: id, to: destination.container) }
        } else {
            index.record(id, entry)
        }
        return entry
    }

    /// Deletes an item: a file only at `baseVersion` (or the version `retryTag` wrote), with `If-Match` where the
    /// version is a strong ETag; a folder only if empty. An item already gone is deleted.
    public func deleteItem(_ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?) async throws {
        await releaseStaleLocksFirst()
        guard let entry = try await settledEntry(id), entry.container == container else { return }
        var movedInWithoutID = false
        if entry.staged == true {
            // A create stopped before it recorded its move: its staged file goes, and the file at the name too if
            // the move landed (it carries the id; or none, if its `MOVE` was sent and the staged name is empty:
            // a server killed mid-`MOVE`, ``requireOwnEarlierAttempt``).
            let staging = path(try components(of: entry.parent, in: container) + [Self.stagingName(id)],
                in: container, folder: entry.isFolder)
            let reply = try await client.send("DELETE", staging)
            guard WebDAVStatus.succeeded(reply.status) || reply.status == 404 else {
                throw WebDAVStatus.error(reply.status, "DELETE \(staging)")
            }
            movedInWithoutID = reply.status == 404 && entry.movingIn == true
        }
        let itemPath = path(try components(of: entry.parent, in: container) + [entry.name], in: container,
            folder: entry.isFolder)
        guard let listing = try await existing(itemPath, depth: entry.isFolder ? 1 : 0) else {
            noteOwnDeletion(id, in: container, parent: entry.parent)
            return
        }
        let properties = try self.properties(of: itemPath, in: listing)
        let parentComponents = try components(of: entry.parent, in: container)
        var now = remoteItem(properties, name: entry.name, parent: entry.parent ?? .root(of: container),
            components: parentComponents, container: container)
        var lostProperties = false
        if movedInWithoutID, properties.folio["id"] == nil {
            lostProperties = try await serverTraits().keepsDeadProperties
        }
        if lostProperties { now.id = id }
        guard now.id == id else {
            noteOwnDeletion(id, in: container, parent: entry.parent)  // another item took the name: ours is gone
            return
        }
        var expected: String?
        if entry.isFolder {
            if listing.responses.count > 1 { throw FolioError.notEmpty("\(entry.name) is not empty on the server") }
        } else {
            var ownWrite = lostProperties
                || retryTag.map { Self.isOwnWrite(properties, tag: $0, version: now.version) } ?? false
            if !ownWrite, let retryTag, now.version != baseVersion {
                // A replacement by this writer cut short after its `PUT` landed (its record says so): its own.
                ownWrite = try await isPendingOwnWrite(id, properties, tag: retryTag, at: itemPath)
            }
            if let baseVersion {
                guard now.version == baseVersion || ownWrite else {
                    throw FolioError.conflict(
                        "\(entry.name) changed on the server (\(now.version), not \(baseVersion)); it is not deleted")
                }
            } else if retryTag != nil, !ownWrite {
                throw FolioError.conflict("\(entry.name) was written by someone else on the server; it is not deleted")
            }
            expected = now.version
        }
        let reply = try await send("DELETE", itemPath, ifAt: expected)
        guard WebDAVStatus.succeeded(reply.status) || reply.status == 404 else {
            throw WebDAVStatus.error(reply.status, "DELETE \(itemPath)")
        }
        if let described = Self.description(in: properties) { await removeThumbnails(of: id, version: described.version) }
        noteOwnDeletion(id, in: container, parent: entry.parent)
    }

    /// `PROPFIND` of `path`, or `nil` if nothing is there.
    func existing(_ path: String, depth: Int) async throws(FolioError) -> WebDAVMultistatus? {
        do {
            return try await propfind(path, depth: depth)
        } catch {
            if case .notFound = error { return nil }
            throw error
        }
    }

    /// What `folio:tag` holds after a write by the writer `tag`: the tag and the version the write made, so a
    /// later write by anyone else (which keeps dead properties as they are) no longer counts as this writer's.
    private func writerTag(
        _ tag: String, at path: String, revision: String, putTag: String?
    ) async throws(FolioError) -> String {
        let base: String
        if let putTag {
            base = putTag  // the tag of what this call wrote, whatever came after it
        } else {
            let properties = try self.properties(of: path, in: try await propfind(path, depth: 0))
            base = Self.baseVersion(properties, size: properties.contentLength ?? 0)
        }
        return tag + " " + Self.weakless(base + " " + revision)
    }

    /// The version to answer for a write of `revision`: the server's version now if it is that write (its
    /// revision, and the tag the `PUT` was answered with), otherwise a version that matches nothing, so that the
    /// next look at the folder reports what came after the write as a change instead of taking it for this one.
    func versionWritten(_ now: String, revision: String, putTag: String?) -> String {
        let parts = now.split(separator: " ", maxSplits: 1).map(String.init)
        // A server that keeps no dead properties (rclone) has no revision to compare: its answer's tag decides.
        let keepsRevisions = traits.withLock { $0 }?.keepsDeadProperties ?? true
        let sameRevision = keepsRevisions ? parts.count == 2 && parts[1] == revision : true
        let ours = sameRevision && (putTag.map { parts.first == $0 } ?? true)
        return ours ? now : "superseded " + revision
    }

    /// A new `folio:rev`: set with every write of content through the provider.
    static func newRevision() -> String {
        String(UUID().uuidString.lowercased().prefix(13))
    }

    /// Whether the resource's content at `version` is what the writer `tag` wrote.
    static func isOwnWrite(_ properties: WebDAVProperties, tag: String, version: String) -> Bool {
        properties.folio["tag"] == tag + " " + weakless(version)
    }

    /// Refuses a name no WebDAV path can hold: empty, `.`, `..`, with `/` or NUL (`.invalidArgument`), or over
    /// 255 bytes (`.nameTooLong`).
    static func checkName(_ name: String) throws(FolioError) {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
            throw .invalidArgument("\"\(name)\" cannot be a name")
        }
        guard name.utf8.count <= 255 else { throw .nameTooLong(String(name.prefix(40)) + "…") }
    }

    /// Whether the file at `path` (of `size` bytes) holds exactly what `body` would send: compared byte for byte
    /// up to 16 MiB (a retried create of a bigger file is sent again).
    private func holds(_ path: String, size: Int64, sameAs body: WebDAVClient.Body) async throws(FolioError) -> Bool {
        let local: Data
        switch body {
        case .none: local = Data()
        case .bytes(let data): local = data
        case .file(let file):
            // stat(2), which follows symlinks: the uploader hands over `/proc/self/fd/N` of the version file.
            var info = stat()
            guard stat(file.string, &info) == 0, Int64(info.st_size) == size, size <= 16 << 20,
                let data = FileManager.default.contents(atPath: file.string)
            else { return false }
            local = data
        }
        guard Int64(local.count) == size else { return false }
        let remote = try await client.send("GET", path, limit: 16 << 20)
        return remote.status == 200 && remote.body == local
    }

    /// Sends `method` to `path` on the condition that the resource is still at `version` (`If-Match` of its ETag;
    /// no condition for `nil` or a version without one). A `412` is looked at again, since a resource still at the
    /// expected version can be refused: Apache's tag of a file written in the last second is weak, and a weak tag
    /// never matches, and the look that follows the refusal can come after that second, when the tag is strong
    /// again. So a resource found still at the expected version is sent to once more, with the condition (after a
    /// second while its tag is weak). Refused again while still at that version under a strong tag, the condition
    /// held and something else did not (a lock another writer was granted, which Apache can do even while this task
    /// holds one): `.busy`, tried again later, never taken for a change on the server.
    func send(
        _ method: String, _ path: String, body: WebDAVClient.Body = .none, ifAt version: String?
    ) async throws(FolioError) -> WebDAVResponse {
        guard let version, let tag = Self.strongTag(version) else {
            return try await client.send(method, path, body: body)
        }
        let reply = try await client.send(method, path, headers: [("If-Match", tag)], body: body)
        guard reply.status == 412, let weak = try await stillAt(version, path) else { return reply }
        if weak {
            // Still the expected version, under a weak tag: once it turns strong, the condition can hold.
            do { try await Task.sleep(for: .milliseconds(1100)) } catch { throw .interrupted("\(method) cancelled") }
        }
        let again = try await client.send(method, path, headers: [("If-Match", tag)], body: body)
        guard again.status == 412, try await stillAt(version, path) != nil else { return again }
        throw .busy("\(method) \(path): refused though unchanged on the server (412; another device holds a lock)")
    }

    /// Whether the resource at `path` is still at `version`: `nil` if not (or gone), otherwise whether its tag is
    /// weak now.
    private func stillAt(_ version: String, _ path: String) async throws(FolioError) -> Bool? {
        guard let listing = try await existing(path, depth: 0) else { return nil }
        let now = try properties(of: path, in: listing)
        guard Self.version(now, size: now.contentLength ?? 0) == version else { return nil }
        return now.entityTag?.hasPrefix("W/") ?? false
    }
}
