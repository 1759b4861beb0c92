import FolioCore
import SystemPackage

extension RemoteTree {
    // MARK: Recording

    /// Journals a change the provider made to `item` (now as described), and remembers it as seen.
    mutating func noteChanged(_ item: RemoteItem) {
        _ = indexes[item.container]?.observe(item, isNew: true)
        journalChange(of: item)
    }

    /// Journals that the provider deleted `id` (or moved it out of `container`), and forgets it there.
    mutating func noteDeparted(_ id: ItemID, from container: ContainerID) {
        indexes[container]?.forget(id)
        journalDeparture(of: id, from: container)
    }

    /// Queues a record of a change of `item` (appended by ``flushJournal()``).
    mutating func journalChange(of item: RemoteItem) {
        pendingRecords[item.container, default: []].append(
            JournalRecord(id: item.id, parentID: item.parentID, name: item.name))
    }

    /// Queues a record of `id` leaving `container`.
    mutating func journalDeparture(of id: ItemID, from container: ContainerID) {
        pendingRecords[container, default: []].append(JournalRecord(id: id, deleted: true))
    }

    /// Appends the queued records to their journals. Called at the end of every hold of the lock
    /// (``SharedRemoteTree/withLock(_:)``), so records are in the journal before the lock is let go.
    /// A journal that cannot be written keeps its records queued.
    mutating func flushJournal() throws {
        for (container, records) in pendingRecords {
            var journal = try self.journal(for: container)
            try journal.append(records)
            journals[container] = journal
            pendingRecords[container] = nil
        }
    }

    /// The journal of `container`, caught up with the file (other processes append to it too).
    mutating func journal(for container: ContainerID) throws -> ChangeJournal {
        var journal = journals[container] ?? ChangeJournal(path: layout.journal(of: container), limit: journalLimit)
        journal.limit = journalLimit
        try journal.refresh()
        journals[container] = journal
        return journal
    }

    /// Expires every anchor of `container` (its journal starts anew).
    mutating func expireAnchors(in container: ContainerID) throws {
        try flushJournal()
        var journal = journals[container] ?? ChangeJournal(path: layout.journal(of: container), limit: journalLimit)
        try journal.expire()
        journals[container] = journal
    }

    // MARK: Answering

    /// The items the records name, as they are now: the last record of each id decides; a change is looked for
    /// where the index places it, then where it was recorded (its parent found through the index, or through
    /// another record of the batch), and an item found in neither place is reported deleted (a move by hand
    /// since is journaled when its folders are listed again), together with the file now in its place, if any
    /// (``successor(of:in:)``). Parents come before their children. Costs in proportion to the records, never a
    /// walk.
    mutating func resolve(
        _ records: [JournalRecord], in container: ContainerID
    ) throws -> (updated: [RemoteItem], deleted: [ItemID]) {
        // Ids another process recorded (a symlink's, or an adopted folder's item) are read as it left them.
        try symlinkIDs.reloadIfChanged()
        try itemIDs?.reloadIfChanged()
        var last: [ItemID: Int] = [:]
        for (position, record) in records.enumerated() { last[record.id] = position }
        var found: [ItemID: RemoteItem] = [:]
        var order: [ItemID] = []
        var deleted: [ItemID] = []
        var waiting: [JournalRecord] = []
        for (position, record) in records.enumerated() where last[record.id] == position {
            if record.deleted {
                if let located = try locateIndexed(record.id, in: container) {
                    // Found since where a listing put it (moved by hand into a folder listed after the record was
                    // made): moved, not deleted.
                    let item = try remoteItem(for: located)
                    found[item.id] = item
                    order.append(item.id)
                } else {
                    indexes[container]?.forget(record.id)
                    deleted.append(record.id)
                }
            } else {
                waiting.append(record)
            }
        }
        // A record whose parent is known only from a later record of the batch is found in a later round.
        var progress = true
        while progress && !waiting.isEmpty {
            progress = false
            var still: [JournalRecord] = []
            for record in waiting {
                guard let located = try locateRecorded(record, in: container) else {
                    still.append(record)
                    continue
                }
                let item = try remoteItem(for: located)
                _ = indexes[container]?.observe(item, isNew: true)
                found[item.id] = item
                order.append(item.id)
                progress = true
            }
            waiting = still
        }
        for record in waiting {
            indexes[container]?.forget(record.id)
            deleted.append(record.id)
            if let successor = try successor(of: record, in: container), found[successor.id] == nil {
                found[successor.id] = successor
                order.append(successor.id)
            }
        }
        return (Self.parentsFirst(order.compactMap { found[$0] }), deleted)
    }

    /// The file now at the place `record` names, for a changed item that is nowhere now: a file saved by hand
    /// (a new file renamed over it) while no process that knew the old one watched, say before a restart. It
    /// is reported with the old one's departure, in the same answer, so a client sees the atomic save at once
    /// and keeps the item (DESIGN.md §2), as a listing of the folder would show it; answered alone, the
    /// departure would take the item away and the folder's next listing bring a new one. `nil` if that place
    /// holds no file, or none the index knows there (the search for the old one indexed what it walked).
    private mutating func successor(of record: JournalRecord, in container: ContainerID) throws -> RemoteItem? {
        guard let name = record.name, !name.isEmpty, name != ".", name != "..", !name.contains("/"),
            (try? ItemName.validate(name)) != nil
        else { return nil }
        var path: FilePath
        if let parentID = record.parentID {
            guard let parent = try locateIndexed(parentID, in: container), parent.kind == .directory else {
                return nil
            }
            path = parent.path
        } else {
            path = try containerDirectory(container)
        }
        path.append(name)
        guard let status = try SystemCalls.statusIfPresent(path), status.kind == .file,
            let id = try identity(at: path, status: status), id != record.id,
            let located = try locateIndexed(id, in: container), located.parentID == record.parentID,
            located.name == name
        else { return nil }
        let item = try remoteItem(for: located)
        _ = indexes[container]?.observe(item, isNew: true)
        return item
    }

    /// `items` with every item after its parent when both are there (otherwise in the order given).
    static func parentsFirst(_ items: [RemoteItem]) -> [RemoteItem] {
        let byID = Dictionary(items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func depth(_ item: RemoteItem) -> Int {
            var count = 0
            var parent = item.parentID
            while let current = parent, let next = byID[current], count <= items.count {
                count += 1
                parent = next.parentID
            }
            return count
        }
        return items.enumerated().sorted { lhs, rhs in
            let (left, right) = (depth(lhs.element), depth(rhs.element))
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element)
    }

    /// The item of a change record: where the index places it, or at the place recorded (then indexed there).
    /// A record naming a place the index does not know (its parent not listed in this process: after a restart),
    /// or a name that is not one component (the journal is the remote's: not trusted), is looked for by id
    /// (``locate(_:in:rescanOnMiss:)``: folder by folder), never reported deleted unseen; with `searching` false,
    /// such an item is not looked for (`nil`).
    mutating func locateRecorded(
        _ record: JournalRecord, in container: ContainerID, searching: Bool = true
    ) throws -> LocatedItem? {
        if let found = try locateIndexed(record.id, in: container) { return found }
        guard let name = record.name else { return nil }
        func elsewhere() throws -> LocatedItem? { searching ? try locate(record.id, in: container) : nil }
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), (try? ItemName.validate(name)) != nil
        else { return try elsewhere() }
        var path: FilePath
        if let parentID = record.parentID {
            guard let parent = try locateIndexed(parentID, in: container), parent.kind == .directory else {
                return try elsewhere()
            }
            path = parent.path
        } else {
            path = try containerDirectory(container)
        }
        path.append(name)
        guard let status = try SystemCalls.statusIfPresent(path), let kind = status.kind,
            try identity(at: path, status: status) == record.id
        else { return try elsewhere() }
        if indexes[container] == nil { indexes[container] = ContainerIndex() }
        indexes[container]?.places[record.id] = ContainerIndex.Place(
            parentID: record.parentID, name: name, isFile: kind == .file)
        return LocatedItem(
            id: record.id, container: container, parentID: record.parentID, name: name, path: path, status: status,
            symlinkTarget: kind == .symlink ? try SystemCalls.symlinkTarget(path) : nil, attributes: nil)
    }
}
