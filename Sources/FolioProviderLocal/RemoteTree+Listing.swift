import FolioCore
import SystemPackage

extension RemoteTree {
    /// One page of a folder's children.
    struct ListedPage {
        /// The children on the page, by name.
        var items: [RemoteItem]
        /// The name of the last entry the page covered, when more follow.
        var next: String?
        /// Children seen before that are no longer where they were (deleted, moved away, replaced).
        var displaced: [ItemID]
    }

    /// One page of the children of the folder `folderID` (`nil` or the root id: the container's root), by
    /// name, after the name `cursor`: the folder's entries are read (one `readdir`), and only the page's
    /// children are looked at (`lstat` and the id attribute) — never another folder. Children without an id get
    /// one, as in a scan (``scan(_:)``): a copy carrying another item's id gets a new one, a file put by hand in
    /// the place of a file that is gone takes its id (an atomic save). What differs from the folder's last
    /// listing in this process is journaled (then ``settle(_:in:)``). A missing folder is
    /// `.notFound`, a file `.notDirectory`.
    mutating func listFolder(
        _ folderID: ItemID?, in container: ContainerID, after cursor: String?, limit: Int
    ) throws -> (items: [RemoteItem], next: String?) {
        let (path, parentID) = try directory(for: folderID, in: container)
        let page = try listFolder(at: path, parentID: parentID, in: container, after: cursor, limit: limit)
        try settle(page.displaced, in: container)
        return (page.items, page.next)
    }

    /// ``listFolder(_:in:after:limit:)`` of a folder found at `path`; the displaced children are left to the
    /// caller (``settle(_:in:)``), which may list other folders first (a child moved there is then found).
    /// `observing` false lists a folder not listed before without keeping it as a baseline (a search);
    /// `changedOnly` looks only for changes (a refresh): an entry whose status is the one last seen there is
    /// unchanged, not read further (one `lstat`) and not returned.
    mutating func listFolder(
        at path: FilePath, parentID: ItemID?, in container: ContainerID, after cursor: String?, limit: Int,
        observing: Bool = true, changedOnly: Bool = false
    ) throws -> ListedPage {
        try symlinkIDs.reloadIfChanged()
        try itemIDs?.reloadIfChanged()
        if indexes[container] == nil { indexes[container] = ContainerIndex() }
        let started = SystemCalls.coarseClock()
        if observing { watchBeforeListing(path) }
        let names: [String]
        do {
            names = try SystemCalls.directoryEntries(path).filter {
                !ItemName.isInternal($0) && !layout.isBookkeeping(path.appending($0))
            }
        } catch FolioError.accessDenied {
            // A folder this process may not read (common in an adopted folder): listed, with nothing in it
            // known; what it holds stays untouched (a delete of it through the mount fails: it is not empty).
            return ListedPage(items: [], next: nil, displaced: [])
        }
        folderListed?(path)
        var position = cursor.map { after in names.firstIndex { $0 > after } ?? names.count } ?? 0
        let (wasListed, previousByName) = previousListing(of: parentID, in: container)
        if observing { indexes[container]?.startListing(parentID) }
        var items: [RemoteItem] = []
        var stamps: [Int?] = []
        var displaced: [ItemID] = []
        var symlinkIDsChanged = false
        while position < names.count && items.count < limit {
            let name = names[position]
            position += 1
            if changedOnly, let previous = previousByName[name],
                let stamp = indexes[container]?.seen[previous]?.stamp,
                let status = try SystemCalls.statusIfPresent(path.appending(name)),
                ContainerIndex.stamp(of: status) == stamp
            {
                continue
            }
            guard
                let (item, status) = try listEntry(
                    name, in: path, parentID: parentID, container: container, previous: previousByName[name],
                    symlinkIDsChanged: &symlinkIDsChanged)
            else { continue }
            if let previous = previousByName[name], previous != item.id { displaced.append(previous) }
            items.append(item)
            stamps.append(status.changeTime < started ? ContainerIndex.stamp(of: status) : nil)
        }
        if symlinkIDsChanged { try symlinkIDs.save() }
        var checked: [FilePath: SpreadFolderIndex.Names?] = [:]
        for index in items.indices where items[index].kind != .symlink {
            items[index].tags = layout.storedTags(of: items[index].id, index: tagFiles, checked: &checked)
        }
        let complete = position >= names.count
        if complete {
            let present = Set(names)
            for (name, id) in previousByName where !present.contains(name) { displaced.append(id) }
        }
        for (item, stamp) in zip(items, stamps)
        where indexes[container]?.observe(item, isNew: wasListed, stamp: stamp) == true {
            journalChange(of: item)
        }
        if complete && observing { indexes[container]?.finishListing(parentID) }
        return ListedPage(items: items, next: complete ? nil : names[position - 1], displaced: displaced)
    }

    /// Whether the folder was listed to its end before, and its children then by name. (A function of its own:
    /// a copy of the index kept while the index is changed would copy its tables at every change.)
    private func previousListing(
        of folder: ItemID?, in container: ContainerID
    ) -> (wasListed: Bool, byName: [String: ItemID]) {
        guard let index = indexes[container] else { return (false, [:]) }
        var byName: [String: ItemID] = [:]
        for id in index.listings[folder] ?? [] {
            if let place = index.places[id], place.parentID == folder { byName[place.name] = id }
        }
        return (index.isBaselined(folder), byName)
    }

    /// Looks at one entry of a listed folder: its id (given now if it has none), indexed at its place, and its
    /// description; `nil` for what a provider cannot store or what vanished meanwhile.
    private mutating func listEntry(
        _ name: String, in folder: FilePath, parentID: ItemID?, container: ContainerID, previous: ItemID?,
        symlinkIDsChanged: inout Bool
    ) throws -> (RemoteItem, FileStatus)? {
        let path = folder.appending(name)
        guard let status = try SystemCalls.statusIfPresent(path), let kind = status.kind else { return nil }
        var target: String?
        var attributes: StoredAttributes?
        let stored: ItemID?
        if kind == .symlink {
            guard let found = try? SystemCalls.symlinkTarget(path) else { return nil }
            target = found
            stored = symlinkID(of: status, target: found)
        } else {
            do {
                attributes = try storedAttributes(at: path, status: status)
                // In an adopted folder every file and folder has an id already: nothing is written on it. (Its
                // place is worked out only there: a tenth of a listing's time otherwise.)
                stored = isAdopted
                    ? fileOrFolderID(
                        attributes: attributes, status: status, components: components(of: path, in: container))
                    : attributes?.id
            } catch FolioError.notFound {
                return nil  // removed since it was listed
            }
        }
        let id: ItemID
        if isAdopted, let stored, kind == .file, attributes?.id == nil, status.linkCount == 1, let previous,
            previous != stored,
            try indexes[container]?.places[stored] == nil || locateIndexed(stored, in: container) == nil,
            indexes[container]?.places[previous]?.isFile == true, try locateIndexed(previous, in: container) == nil
        {
            // A new inode in the place of a file that is gone, in an adopted folder: the user's own tools saved
            // by writing a new file and renaming it over the old one. The same document, changed: it keeps its id,
            // kept in the id map (nothing is written on the file). Also when the new file was seen first under its
            // temporary name (listed before the rename): it left that place, and replacing a file with a file keeps
            // the target's identity, as a rename through the mount does; the temporary name's item departs when
            // its folder's listing no longer finds it there.
            itemIDs?.record(StoredAttributes(id: previous), for: status)
            id = previous
        } else if let stored, try isOwn(stored, at: parentID, name, in: container) {
            id = stored
        } else if stored == nil, kind == .file, let previous, indexes[container]?.places[previous]?.isFile == true,
            try locateIndexed(previous, in: container) == nil, try !isHeldElsewhere(previous, outside: container)
        {
            id = assignID(previous, to: path, status: status, symlinkTarget: nil, replacing: false)
        } else {
            id = assignID(to: path, status: status, symlinkTarget: target, replacing: stored != nil)
            if kind == .symlink { symlinkIDsChanged = true }
        }
        indexes[container]?.places[id] = ContainerIndex.Place(parentID: parentID, name: name, isFile: kind == .file)
        let located = LocatedItem(
            id: id, container: container, parentID: parentID, name: name, path: path, status: status,
            symlinkTarget: target, attributes: attributes)
        do {
            return (try remoteItem(for: located, readingTags: false), status)  // (tags: by the caller, for the page)
        } catch FolioError.notFound {
            return nil
        }
    }

    /// Whether the id `stored`, found on the entry `name` of the folder `parentID`, is that entry's own: not a
    /// container root's, and not held by another item (a `cp -a` copy brought it along) — an index entry
    /// elsewhere that the disk no longer confirms is stale (the item was moved here by hand).
    private mutating func isOwn(
        _ stored: ItemID, at parentID: ItemID?, _ name: String, in container: ContainerID
    ) throws -> Bool {
        if stored.isContainerRoot { return false }
        if let place = indexes[container]?.places[stored] {
            if place.parentID == parentID && place.name == name { return true }
            return try locateIndexed(stored, in: container) == nil
        }
        return try !isHeldElsewhere(stored, outside: container)
    }

    // MARK: Reconciling

    /// Decides about children a listing no longer found where they were: one the index still finds (it was moved
    /// elsewhere, and that folder was listed) is journaled as changed if it differs; any other left the
    /// container (deleted, or moved out of what this process has seen), is journaled as deleted, and is no longer
    /// watched (``unwatchDeparted(_:in:)``).
    mutating func settle(_ displaced: [ItemID], in container: ContainerID) throws {
        for id in displaced {
            if let found = try locateIndexed(id, in: container) {
                let item = try remoteItem(for: found)
                if indexes[container]?.observe(item, isNew: true) == true { journalChange(of: item) }
            } else if indexes[container]?.seen[id] != nil || indexes[container]?.places[id] != nil {
                unwatchDeparted(id, in: container)
                indexes[container]?.forget(id)
                journalDeparture(of: id, from: container)
            }
        }
    }

    /// Takes in a whole scan of a container: its places replace the index's, and every item is compared with
    /// what was seen of it (new ones in folders listed before, changed and moved ones are journaled; those seen
    /// and gone are journaled as deleted). Every folder is listed from now on.
    mutating func reconcileScan(
        of container: ContainerID, places: [ItemID: ContainerIndex.Place], items: [RemoteItem]
    ) {
        var index = indexes[container] ?? ContainerIndex()
        let listedBefore = Set(index.listings.keys)
        index.places = places
        index.isComplete = true
        index.startListing(nil)
        for item in items where item.kind == .directory { index.startListing(item.id) }
        index.unfinished = []
        var departed: [ItemID] = []
        for id in index.seen.keys where places[id] == nil { departed.append(id) }
        for id in departed { index.forget(id) }
        for item in items where index.observe(item, isNew: listedBefore.contains(item.parentID)) {
            journalChange(of: item)
        }
        indexes[container] = index
        for id in departed { journalDeparture(of: id, from: container) }
    }

    // MARK: Finding changes made by hand

    /// Lists again the listed folders `folders` (all their pages) and journals what differs; a folder no longer
    /// where the index places it is skipped (its parent's listing finds it moved or gone). Children displaced
    /// from one folder are decided after all are listed, so a move between two of them is one change.
    mutating func refresh(_ folders: [ItemID?], in container: ContainerID) throws {
        var displaced: [ItemID] = []
        var done: Set<ItemID?> = []
        for folder in folders where done.insert(folder).inserted && indexes[container]?.isListed(folder) == true {
            let path: FilePath
            if let folder {
                guard let found = try locateIndexed(folder, in: container), found.kind == .directory else { continue }
                path = found.path
            } else {
                path = try containerDirectory(container)
            }
            do {
                displaced += try listFolder(
                    at: path, parentID: folder, in: container, after: nil, limit: .max, changedOnly: true
                ).displaced
            } catch FolioError.notFound {
                continue  // gone meanwhile: its parent's listing says so
            }
        }
        try settle(displaced, in: container)
    }

    /// The sweep: lists again the next `count` listed folders of the container, round robin, so a change made
    /// by hand that no push reported (no watcher, or made while no Folio process ran with the folder listed) is
    /// found within (listed folders ÷ `count`) calls. Cost: those folders' children.
    mutating func sweep(_ container: ContainerID, folders count: Int) throws {
        guard let folders = indexes[container]?.nextToSweep(count), !folders.isEmpty else { return }
        try refresh(folders, in: container)
    }

    /// Whether ``slowSweepSeconds`` have passed since the slow sweep (one folder, while a watcher runs) last ran
    /// in `container`; if so, it is due now.
    mutating func slowSweepIsDue(in container: ContainerID) -> Bool {
        let now = SystemCalls.coarseClock().seconds
        guard lastSlowSweep[container].map({ now >= $0 + slowSweepSeconds }) ?? true else { return false }
        lastSlowSweep[container] = now
        return true
    }

    /// The listed folders of `container` among the folders at `paths` (absolute; the ones a watcher saw
    /// change), by id, parents before their children (listed again in that order, a folder renamed is found
    /// under its new name by its parent's listing before its own).
    func listedFolders(at paths: [FilePath], in container: ContainerID) -> [ItemID?] {
        guard let index = indexes[container], let base = try? containerDirectory(container) else { return [] }
        var folders: [ItemID?] = []
        let shallowFirst = paths.sorted { ($0.components.count, $0.string) < ($1.components.count, $1.string) }
        for path in shallowFirst where path.starts(with: base) {
            if path == base {
                folders.append(nil)
                continue
            }
            guard let status = try? SystemCalls.statusIfPresent(path), status.kind == .directory,
                let id = try? identity(at: path, status: status), index.isListed(id)
            else { continue }
            folders.append(id)
        }
        return folders
    }

    // MARK: Searching

    /// Looks for an item folder by folder from the container's root (breadth first, by name), stopping in the
    /// folder where it is found. Costs up to the whole container (a `readdir` of every folder, an `lstat` and an
    /// attribute read of every entry) when the item is not there: only for an id the index lacks (asked about
    /// after a restart, or made by hand and never listed). A search that finds nothing walked everything and
    /// marks the index complete.
    mutating func search(_ id: ItemID, in container: ContainerID) throws -> LocatedItem? {
        let base = try containerDirectory(container)
        var queue: [(path: FilePath, id: ItemID?)] = [(base, nil)]
        var displaced: [ItemID] = []
        var next = 0
        while next < queue.count {
            let folder = queue[next]
            next += 1
            let page: ListedPage
            do {
                page = try listFolder(
                    at: folder.path, parentID: folder.id, in: container, after: nil, limit: .max,
                    observing: indexes[container]?.isListed(folder.id) ?? false)
            } catch FolioError.notFound {
                continue
            }
            displaced += page.displaced
            if page.items.contains(where: { $0.id == id }) {
                try settle(displaced, in: container)
                return try locateIndexed(id, in: container)
            }
            for item in page.items where item.kind == .directory {
                queue.append((folder.path.appending(item.name), item.id))
            }
        }
        try settle(displaced, in: container)
        indexes[container]?.isComplete = true
        return nil
    }
}
