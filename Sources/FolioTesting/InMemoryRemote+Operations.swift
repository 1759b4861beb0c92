import FolioCore

extension InMemoryRemote {
    // MARK: Create

    /// Creates an item (see ``Provider/createItem(_:contents:)``); `content` `nil`: none sent (empty, for a file).
    /// A create of an id the remote has is a retry: the item as it is, or with `content` if that differs and the
    /// template's retry tag wrote the item's version (the first attempt's answer was lost), else `.conflict`.
    mutating func create(_ template: RemoteItemTemplate, content: [UInt8]?) throws(FolioError) -> RemoteItem {
        try policy.validateLocal(template.name)
        if let holder = containerHolding(template.id), var entry = spaces[holder]?.entries[template.id] {
            guard entry.item.kind == .file, let content, content != entry.content else { return entry.item }
            guard let tag = template.retryTag, entry.writtenBy == tag else {
                throw .conflict("\(entry.item.name) (\(template.id)) was created on the remote and changed there since")
            }
            write(content, to: &entry, by: tag, modificationTime: template.modificationTime)
            spaces[holder]?.entries[template.id] = entry
            noteChanged(template.id, in: holder)
            return entry.item
        }
        let parent = Self.folderID(template.parentID)
        try checkFolder(parent, in: template.container)
        guard !isTaken(template.name, in: parent, of: template.container) else {
            throw .exists("\(template.name) in \(parent?.rawValue ?? template.container.rawValue)")
        }
        switch template.kind {
        case .file, .directory, .symlink: break
        default: throw .notSupported("\(template.name): the remote keeps files, folders and symlinks only")
        }
        var item = RemoteItem(
            id: template.id, container: template.container, parentID: parent, name: template.name,
            kind: template.kind, size: 0, modificationTime: template.modificationTime, mode: template.mode & 0o7777,
            symlinkTarget: template.kind == .symlink ? template.symlinkTarget ?? "" : nil,
            version: newVersion(template.kind), tags: template.kind == .symlink ? nil : [])
        var entry = Entry(item: item, content: [], writtenBy: template.retryTag)
        if template.kind == .file {
            item.size = Int64(content?.count ?? 0)
            entry.item = item
            entry.content = content ?? []
            versions[item.version] = entry.content
        }
        spaces[template.container]?.entries[template.id] = entry
        noteChanged(template.id, in: template.container)
        return entry.item
    }

    /// Gives `entry` new content: a new version, written by `tag`.
    private mutating func write(
        _ content: [UInt8], to entry: inout Entry, by tag: String?, modificationTime: Timestamp?
    ) {
        entry.content = content
        entry.item.version = newVersion(.file)
        entry.item.size = Int64(content.count)
        entry.item.modificationTime = modificationTime ?? .now()
        entry.writtenBy = tag
        versions[entry.item.version] = content
    }

    // MARK: Modify

    /// Changes an item (see ``Provider/modifyItem(_:in:baseVersion:changes:contents:)``): checked whole before
    /// anything changes, so a refused change changes nothing.
    mutating func modify(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges, content: [UInt8]?
    ) throws(FolioError) -> RemoteItem {
        guard var entry = spaces[container]?.entries[id] else { throw .notFound("item \(id) in \(container)") }
        if let name = changes.name { try policy.validateLocal(name) }
        let destination = changes.container ?? container
        let parent: ItemID? = if let requested = changes.parentID {
            Self.folderID(requested)
        } else {
            destination == container ? entry.item.parentID : nil
        }
        let name = changes.name ?? entry.item.name
        let moves = destination != container || parent != entry.item.parentID || name != entry.item.name
        if moves {
            try checkFolder(parent, in: destination)
            if destination == container, isWithin(parent, id, in: container) {
                throw .invalidArgument("cannot move \(entry.item.name) (\(id)) into itself")
            }
            if isTaken(name, in: parent, of: destination, except: id) {
                throw .exists("\(name) in \(parent?.rawValue ?? destination.rawValue)")
            }
        }
        let ownWrite = changes.retryTag != nil && entry.writtenBy == changes.retryTag
        var newContent: [UInt8]?
        var changedElsewhere = false
        if let content {
            switch entry.item.kind {
            case .directory: throw .isDirectory("\(entry.item.name) (\(id)) has no content")
            case .symlink: throw .invalidArgument("\(entry.item.name) (\(id)) is a symlink: it has no content")
            default: break
            }
            if entry.item.version == baseVersion || ownWrite {
                newContent = content
            } else if content != entry.content {
                throw .conflict("\(entry.item.name) (\(id)) is at version \(entry.item.version), not \(baseVersion)")
            }  // (else a retry whose first attempt landed: the remote has this content already)
        } else if entry.item.kind == .file, entry.item.version != baseVersion, !ownWrite {
            changedElsewhere = true
        }
        if let newContent {
            write(newContent, to: &entry, by: changes.retryTag, modificationTime: changes.modificationTime)
        }
        if let mode = changes.mode, entry.item.kind != .symlink { entry.item.mode = mode & 0o7777 }
        if let time = changes.modificationTime { entry.item.modificationTime = time }
        if let tags = changes.tags, entry.item.kind != .symlink {
            entry.item.tags = tags.merged(into: entry.item.tags ?? [])
        }
        entry.item.parentID = parent
        entry.item.name = name
        if destination == container {
            spaces[container]?.entries[id] = entry
            noteChanged(id, in: container)
        } else {
            // Everything below it goes along: gone from this container, new in the other.
            let moved = subtree(id, in: container)
            for movedID in moved {
                guard var movedEntry = spaces[container]?.entries.removeValue(forKey: movedID) else { continue }
                if movedID == id { movedEntry = entry }
                movedEntry.item.container = destination
                spaces[destination]?.entries[movedID] = movedEntry
                noteChanged(movedID, in: destination)
            }
            noteChanged(id, in: container)
            entry.item.container = destination
        }
        var answer = entry.item
        answer.changedElsewhere = changedElsewhere
        return answer
    }

    // MARK: Delete

    /// Deletes an item (see ``Provider/deleteItem(_:in:baseVersion:retryTag:)``): one already gone is fine.
    mutating func delete(
        _ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?
    ) throws(FolioError) {
        guard let space = spaces[container], let entry = space.entries[id] else { return }
        let ownWrite = entry.item.kind == .file && retryTag != nil && entry.writtenBy == retryTag
        if let baseVersion, entry.item.version != baseVersion, !ownWrite {
            throw .conflict("\(entry.item.name) (\(id)) changed on the remote: version \(entry.item.version), not "
                + baseVersion)
        }
        if baseVersion == nil, retryTag != nil, entry.item.kind == .file, !ownWrite {
            throw .conflict("\(entry.item.name) (\(id)) was created on the remote and changed there since")
        }
        if entry.item.kind == .directory, space.entries.values.contains(where: { $0.item.parentID == id }) {
            throw .notEmpty("\(entry.item.name) (\(id))")
        }
        spaces[container]?.entries[id] = nil
        noteChanged(id, in: container)
    }

    // MARK: Listing and changes

    /// One page of `folder`'s children (see ``Provider/enumerateFolder(_:in:from:pageSize:)``): by name, a cursor
    /// naming the last child listed, so a child that stays in place is listed once whatever changes meanwhile.
    func page(
        of folder: ItemID?, in container: ContainerID, from cursor: PageCursor?, pageSize: Int
    ) throws(FolioError) -> FolderPage {
        let folder = Self.folderID(folder)
        try checkFolder(folder, in: container)
        var children = children(of: folder, in: container)
        if let cursor {
            guard cursor.rawValue.hasPrefix(Self.cursorPrefix) else {
                throw .anchorExpired("\(cursor.rawValue) is not a cursor of this remote")
            }
            let last = cursor.rawValue.dropFirst(Self.cursorPrefix.count).utf8
            children.removeAll { !last.lexicographicallyPrecedes($0.name.utf8) }
        }
        let items = Array(children.prefix(max(1, pageSize)))
        let next = children.count > items.count ? items.last.map { PageCursor(Self.cursorPrefix + $0.name) } : nil
        return FolderPage(items: items, next: next)
    }

    /// What a cursor starts with.
    static let cursorPrefix = "after:"

    /// The anchor of position `position` of the remote named `remote`.
    static func anchor(_ remote: String, _ position: UInt64) -> SyncAnchor {
        SyncAnchor("mem:\(remote):\(position)")
    }

    /// The position an anchor of the remote named `remote` names; `nil` for anything else.
    static func position(of anchor: SyncAnchor, remote: String) -> UInt64? {
        let prefix = "mem:\(remote):"
        guard anchor.rawValue.hasPrefix(prefix) else { return nil }
        return UInt64(anchor.rawValue.dropFirst(prefix.count))
    }

    /// The changes of `container` since `anchor`, at most `limit` items (then ``RemoteChanges/moreComing``): each
    /// item changed since, once, as it is now, or among the deleted if the container no longer has it.
    func changes(
        in container: ContainerID, since anchor: SyncAnchor, remote: String, limit: Int
    ) throws(FolioError) -> RemoteChanges {
        let space = try space(container)
        guard let from = Self.position(of: anchor, remote: remote), from <= position, from >= space.trimmedBefore
        else { throw .anchorExpired("\(anchor.rawValue) is not an anchor this remote can answer for") }
        // (The log is in order: the first record after the anchor is found by bisection.)
        var low = 0
        var high = space.log.count
        while low < high {
            let middle = (low + high) / 2
            if space.log[middle].position <= from { low = middle + 1 } else { high = middle }
        }
        var last: [ItemID: UInt64] = [:]
        for record in space.log[low...] { last[record.id] = record.position }
        let ordered = last.sorted { $0.value < $1.value }
        let taken = ordered.prefix(max(1, limit))
        var updated: [RemoteItem] = []
        var deleted: [ItemID] = []
        for (id, _) in taken {
            if let entry = space.entries[id] { updated.append(entry.item) } else { deleted.append(id) }
        }
        let moreComing = taken.count < ordered.count
        let reached = moreComing ? taken.last?.value ?? position : position
        return RemoteChanges(
            updated: updated, deleted: deleted, anchor: Self.anchor(remote, reached), moreComing: moreComing)
    }

    /// Trims `container`'s history: every anchor of it taken before now is expired.
    mutating func expireAnchors(in container: ContainerID) {
        spaces[container]?.trimmedBefore = position
        spaces[container]?.log.removeAll()
    }

    // MARK: Descriptions

    /// Keeps a description (and its thumbnails) of an item's current version; one of another version, or of an
    /// item that is gone, is dropped.
    mutating func store(
        _ description: ContentDescription, thumbnails: [ThumbnailSize: [UInt8]], of id: ItemID,
        in container: ContainerID
    ) {
        guard var entry = spaces[container]?.entries[id], entry.item.version == description.version else { return }
        entry.description = description
        entry.thumbnails = description.thumbnails == .made ? thumbnails : [:]
        spaces[container]?.entries[id] = entry
    }
}
