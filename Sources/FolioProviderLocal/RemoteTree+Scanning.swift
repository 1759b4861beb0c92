import FolioCore
import SystemPackage

extension RemoteTree {
    /// One object met during a scan.
    private struct ScannedObject {
        /// Path components below the container's directory.
        var components: [String]
        /// Index of the parent folder in the scan, `nil` at the container's root.
        var parent: Int?
        /// The object's status.
        var status: FileStatus
        /// The target, for a symlink.
        var symlinkTarget: String?
        /// The id found on it, then the id it keeps or gets.
        var id: ItemID?
        /// The attributes found on it (`nil` for a symlink).
        var attributes: StoredAttributes?
        /// The id found on it was dropped as a duplicate (a `cp -a` copy): its new id replaces it.
        var hadDuplicateID = false
    }

    /// Walks a container's whole tree (metadata only, never content), gives an id to every object without one,
    /// rebuilds the container's index, journals what differs from what was seen of its folders before
    /// (``reconcileScan(of:places:items:)``) and returns every item, parents before their children.
    ///
    /// Skipped: the provider's own `.folio-` files, objects a provider cannot store (devices, FIFOs, sockets)
    /// and names that are not valid UTF-8.
    ///
    /// A walk is not atomic: a rename made while it runs can hide an item under both names (it would look
    /// deleted) or show it under both (it would look copied). So a walk during which any folder changed is
    /// made again, up to ``walkAttempts`` times in all; see ``isSettled(_:base:since:)``. An entry that
    /// vanishes while it is read is skipped, never an error.
    mutating func scan(_ container: ContainerID) throws -> [RemoteItem] {
        let base = try containerDirectory(container)
        try symlinkIDs.reloadIfChanged()
        try itemIDs?.reloadIfChanged()
        var objects: [ScannedObject] = []
        for attempt in 1...Self.walkAttempts {
            let started = SystemCalls.coarseClock()
            objects = []
            try collect(directory: base, components: [], parent: nil, into: &objects)
            if try attempt == Self.walkAttempts || isSettled(objects, base: base, since: started) { break }
            SystemCalls.waitOneClockTick()
        }
        try dropDuplicateIDs(in: &objects, container: container)
        let replaced = try replacedFiles(in: objects, container: container)

        var index = ContainerIndex()
        var items: [RemoteItem] = []
        items.reserveCapacity(objects.count)
        var symlinkIDsChanged = false
        for position in objects.indices {
            var path = base
            for component in objects[position].components { path.append(component) }
            let object = objects[position]
            let id: ItemID
            if let previous = replaced[position] {
                if isAdopted {
                    // Kept in the map, keyed by the new file's inode: nothing is written on the file.
                    itemIDs?.record(StoredAttributes(id: previous), for: object.status)
                    id = previous
                } else {
                    id = assignID(previous, to: path, status: object.status, symlinkTarget: nil, replacing: false)
                }
                objects[position].id = id
            } else if let existing = object.id {
                id = existing
            } else {
                id = assignID(
                    to: path, status: object.status, symlinkTarget: object.symlinkTarget,
                    replacing: object.hadDuplicateID)
                if object.status.kind == .symlink { symlinkIDsChanged = true }
                objects[position].id = id
            }
            let parentID = object.parent.flatMap { objects[$0].id }
            let name = object.components.last ?? ""
            // The attributes as read (an id given now changes none of what the item's description needs).
            let located = LocatedItem(
                id: id, container: container, parentID: parentID, name: name, path: path, status: object.status,
                symlinkTarget: object.symlinkTarget, attributes: object.attributes
            )
            do {
                items.append(try remoteItem(for: located))
            } catch FolioError.notFound {
                continue  // removed by someone else while we were scanning
            }
            index.places[id] = ContainerIndex.Place(
                parentID: parentID, name: name, isFile: object.status.kind == .file)
        }
        if symlinkIDsChanged { try symlinkIDs.save() }
        reconcileScan(of: container, places: index.places, items: items)
        return items
    }

    /// How many walks a scan makes at most while folders keep changing under it; the last one is taken as it
    /// is (README "Limitations").
    static let walkAttempts = 4

    /// Whether no folder of a walk that started at `started` (the coarse clock the kernel stamps changes
    /// with) changed since: every folder still exists and its change time is before `started`. A time equal
    /// to `started` counts as changed, since a change in the same clock tick after the walk began leaves the
    /// same time. (The change time, unlike the modification time, cannot be set by hand: `touch -d`, `tar x`
    /// and `cp -a` of a folder with a future time do not make every walk look torn.)
    private func isSettled(_ objects: [ScannedObject], base: FilePath, since started: Timestamp) throws -> Bool {
        var folders = [base]
        for object in objects where object.status.kind == .directory {
            var path = base
            for component in object.components { path.append(component) }
            folders.append(path)
        }
        for folder in folders {
            guard let now = try SystemCalls.statusIfPresent(folder), now.kind == .directory,
                now.changeTime < started
            else { return false }
        }
        return true
    }

    /// Appends every storable object below `directory` (depth first, names sorted) to `objects`.
    private func collect(
        directory: FilePath, components: [String], parent: Int?, into objects: inout [ScannedObject]
    ) throws {
        watchBeforeListing(directory)
        let names: [String]
        do {
            names = try SystemCalls.directoryEntries(directory)
        } catch FolioError.notFound {
            return  // removed while we were scanning
        } catch FolioError.accessDenied {
            // A folder this process may not read (common in an adopted folder): listed, with nothing in it
            // known; what it holds stays untouched (a delete of it through the mount fails: it is not empty).
            return
        }
        folderListed?(directory)
        for name in names where !ItemName.isInternal(name) {
            let path = directory.appending(name)
            if layout.isBookkeeping(path) { continue }
            guard let status = try SystemCalls.statusIfPresent(path), let kind = status.kind else { continue }
            let target = kind == .symlink ? try? SystemCalls.symlinkTarget(path) : nil
            if kind == .symlink && target == nil { continue }
            let stored: ItemID?
            var attributes: StoredAttributes?
            if kind == .symlink, let target {
                stored = symlinkID(of: status, target: target)
            } else {
                do {
                    attributes = try storedAttributes(at: path, status: status)
                    // In an adopted folder every file and folder has an id already: nothing is written on it.
                    stored = isAdopted
                        ? fileOrFolderID(attributes: attributes, status: status, components: components + [name])
                        : attributes?.id
                } catch FolioError.notFound {
                    continue  // removed since it was listed
                }
            }
            objects.append(
                ScannedObject(
                    components: components + [name], parent: parent, status: status, symlinkTarget: target,
                    id: stored, attributes: attributes
                )
            )
            if kind == .directory {
                try collect(
                    directory: path, components: components + [name], parent: objects.count - 1, into: &objects)
            }
        }
    }

    /// Makes ids unique: when two objects carry the same id (a `cp -a` copy), the one the index knew at that
    /// place keeps it (otherwise the first met), and the other gets a new id. An id still held by an item of
    /// another container is given up here too; a stale entry of another container (the item was moved here by
    /// hand) is dropped from that container's index.
    private mutating func dropDuplicateIDs(in objects: inout [ScannedObject], container: ContainerID) throws {
        let previous = indexes[container]
        var holder: [ItemID: Int] = [:]
        for position in objects.indices {
            guard let id = objects[position].id else { continue }
            if id.isContainerRoot {
                objects[position].id = nil
                objects[position].hadDuplicateID = true
            } else if let earlier = holder[id] {
                if previous?.components(of: id) == objects[position].components {
                    objects[earlier].id = nil
                    objects[earlier].hadDuplicateID = true
                    holder[id] = position
                } else {
                    objects[position].id = nil
                    objects[position].hadDuplicateID = true
                }
            } else if try isHeldElsewhere(id, outside: container) {
                objects[position].id = nil
                objects[position].hadDuplicateID = true
            } else {
                holder[id] = position
            }
        }
    }

    /// Whether an item of another scanned container really holds `id`; forgets stale entries on the way.
    mutating func isHeldElsewhere(_ id: ItemID, outside container: ContainerID) throws -> Bool {
        for other in indexes.keys where other != container && indexes[other]?.places[id] != nil {
            let found: LocatedItem?
            do {
                found = try locateIndexed(id, in: other)
            } catch FolioError.notFound {
                found = nil
            }
            if found != nil { return true }
            indexes[other]?.places[id] = nil
        }
        return false
    }

    /// Files without an id found where the last scan had a file whose id nobody holds now: a program saved
    /// that document by writing a new file and renaming it over the old one (most editors do). Such a file
    /// is the same document, changed (DESIGN.md §2: an atomic save keeps the item), so it takes over the id:
    /// a client sees a new version of the item — a conflict if it changed the document too — instead of a
    /// delete and a create. Only a file's id passes to a file, and only if no other container holds the item
    /// now (it may have been moved there by hand). By position in `objects`.
    private mutating func replacedFiles(
        in objects: [ScannedObject], container: ContainerID
    ) throws -> [Int: ItemID] {
        guard let previous = indexes[container] else { return [:] }
        let held = Set(objects.compactMap(\.id))
        var vacated: [[String]: ItemID] = [:]
        for (id, place) in previous.places where place.isFile && !held.contains(id) {
            if let components = previous.components(of: id) { vacated[components] = id }
        }
        guard !vacated.isEmpty else { return [:] }
        let wanted = Set(objects.filter { isTakeoverCandidate($0, previous: previous) }.map(\.components))
        for (components, id) in vacated {
            if !wanted.contains(components) {
                vacated[components] = nil
            } else if try isHeldElsewhere(id, outside: container) {
                vacated[components] = nil
            }
        }
        guard !vacated.isEmpty else { return [:] }
        var replaced: [Int: ItemID] = [:]
        for (position, object) in objects.enumerated() where isTakeoverCandidate(object, previous: previous) {
            if let id = vacated[object.components] { replaced[position] = id }
        }
        return replaced
    }

    /// Whether a scanned object may take over the id of a file that left its place: a file found without an id
    /// (not a `cp -a` copy), or in an adopted folder (where every file has one, derived from its inode) a file
    /// with one name and no map entry whose id the last scan did not know: a new inode, such as the user's own
    /// tools make when they save by writing a new file and renaming it over the old one.
    private func isTakeoverCandidate(_ object: ScannedObject, previous: ContainerIndex) -> Bool {
        guard object.status.kind == .file, !object.hadDuplicateID else { return false }
        guard isAdopted else { return object.id == nil }
        guard let id = object.id, object.attributes?.id == nil, object.status.linkCount == 1 else { return false }
        return previous.places[id] == nil
    }

    /// The id given to the object with `status` whose attribute `attribute` has no usable id: the same in every
    /// process (FNV-1a of the device, inode and attribute).
    static func repairedID(of status: FileStatus, attribute: String) -> ItemID {
        let hash = StableHash.fnv1a("\(status.device):\(status.inode):\(attribute)")
        return ItemID("repaired-\(String(hash, radix: 16))")
    }

    /// Gives an id to an object found without one: a new one, or `id` (the one of the file it replaced). For a
    /// file or folder whose xattr cannot be set (not ours to change), the id derived from its inode is used
    /// instead.
    mutating func assignID(
        _ id: ItemID = .generate(), to path: FilePath, status: FileStatus, symlinkTarget: String?, replacing: Bool
    ) -> ItemID {
        if isAdopted {
            // Nothing is written on the user's items: a second holder of an id (only a hard link could be one)
            // gets one made from its place, the same in every process.
            return Self.repairedID(of: status, attribute: path.string)
        }
        if status.kind == .symlink, let symlinkTarget {
            symlinkIDs.record(id, status: status, target: symlinkTarget)
            return id
        }
        do {
            // An object without an id: create-only, since another process (a second Folio mount of this remote)
            // may give it an id at the same moment; the first one wins and both use it. An object whose id was
            // a duplicate (a `cp -a` copy) gets its new id written over the old one.
            var attributes = replacing ? try StoredAttributes.read(path) : StoredAttributes()
            attributes.id = id
            attributes.stamp = nil  // a copy is nobody's upload
            try attributes.write(to: path, onlyIfAbsent: !replacing)
            return id
        } catch FolioError.exists {
            if let stored = try? StoredAttributes.read(path).id { return stored }
            // An attribute without a usable id (malformed, or written without one) is replaced, keeping what
            // else it holds, by an id made from the object and that value: another process repairing it at the
            // same moment writes the same.
            let value = try? SystemCalls.extendedAttribute(StoredAttributes.name, of: path)
            var attributes = value.flatMap(StoredAttributes.init(encoded:)) ?? StoredAttributes()
            attributes.id = Self.repairedID(of: status, attribute: value ?? "")
            if (try? attributes.write(to: path)) != nil, let stored = attributes.id { return stored }
            return Self.derivedID(of: status)
        } catch {
            return Self.derivedID(of: status)
        }
    }
}
