import FolioCore
import Foundation
import Synchronization

/// Where each item the provider has seen lives: its container, parent and name, by id. A WebDAV server addresses
/// resources by path, Folio by id; the index turns one into the other, and a move changes one entry (a folder's
/// descendants follow it, since a path is found by walking up the parents).
///
/// Kept in a file of JSON lines in the mount's state folder, appended to as the index changes and compacted when
/// it is loaded, so an item uploaded after a restart is found without listing the remote again.
final class ItemIndex: Sendable {
    /// One item's place.
    struct Entry: JSONLineWritable, Equatable, Sendable {
        var container: ContainerID
        /// The parent folder, `nil` for the container's root.
        var parent: ItemID?
        var name: String
        var isFolder: Bool
        /// A create of this file is under way: its content is written under a hidden name beside the place
        /// (``WebDAVProvider/stagingName(_:)``) and moved to its name once whole, with its properties. The place is
        /// not this item's yet (``ItemIndex/id(in:parent:name:)`` does not name it); a delete removes the staged
        /// file, and a retry writes it again.
        var staged: Bool?
        /// The `MOVE` of this staged create's file (or folder) to its name was sent, and may have landed: what is at
        /// the name with no id (a server killed between the rename and the move of the properties, which Apache
        /// makes in two steps) is this item, if its staged name is empty. Without it, such a file is someone else's.
        var movingIn: Bool?
        /// A replacement of the file's content whose properties (revision, writer's tag) are not set yet: before
        /// its `PUT` is answered, `<retry tag> ~<size>:<digest>` of the bytes sent; once it landed, `<retry tag>
        /// <ETag the PUT left>`. The writer of that retry tag (its retry, or the delete that follows it) finds the
        /// file still at those bytes or that tag after a daemon killed meanwhile, and takes it for its own write.
        var pendingWrite: String?
        /// A move (`MOVE`) sent and not known to have landed: where it takes the item. The next look at the item
        /// (``WebDAVProvider/settledEntry(_:)``) finds out whether it did.
        var movingTo: Destination?

        init(
            container: ContainerID, parent: ItemID?, name: String, isFolder: Bool, staged: Bool? = nil,
            movingIn: Bool? = nil, pendingWrite: String? = nil
        ) {
            (self.container, self.parent, self.name, self.isFolder) = (container, parent, name, isFolder)
            (self.staged, self.movingIn, self.pendingWrite) = (staged, movingIn, pendingWrite)
        }

        func write(to writer: inout JSONLineWriter) {
            writer.object { writer in
                writer.member("container", container)
                writer.member("parent", parent)
                writer.member("name", name)
                writer.member("isFolder", isFolder)
                writer.member("staged", staged)
                writer.member("movingIn", movingIn)
                writer.member("pendingWrite", pendingWrite)
                writer.member("movingTo", movingTo)
            }
        }
    }

    /// Where a move takes an item.
    struct Destination: JSONLineWritable, Equatable, Sendable {
        var container: ContainerID
        var parent: ItemID?
        var name: String

        func write(to writer: inout JSONLineWriter) {
            writer.object { writer in
                writer.member("container", container)
                writer.member("parent", parent)
                writer.member("name", name)
            }
        }
    }

    /// A line of the file: an entry, or the removal of one (`entry` `nil`).
    private struct Line: JSONLineWritable {
        var id: ItemID
        var entry: Entry?

        func write(to writer: inout JSONLineWriter) {
            writer.object { writer in
                writer.member("id", id)
                writer.member("entry", entry)
            }
        }
    }

    /// A place: container, parent (`nil`: the root) and name.
    private struct Place: Hashable {
        var container: ContainerID
        var parent: ItemID?
        var name: String
        init(_ entry: Entry) { (container, parent, name) = (entry.container, entry.parent, entry.name) }
    }

    private struct Tables {
        var entries: [ItemID: Entry] = [:]
        var byPlace: [Place: ItemID] = [:]

        mutating func set(_ id: ItemID, _ entry: Entry?) {
            if let old = entries[id], byPlace[Place(old)] == id { byPlace[Place(old)] = nil }
            entries[id] = entry
            if let entry, entry.staged != true { byPlace[Place(entry)] = id }
        }
    }

    private let tables: Mutex<Tables>
    private let file: JSONLinesFile<Line>?

    /// An index kept in `file` (`nil`: in memory only).
    init(file: URL?) {
        self.file = file.map { JSONLinesFile($0) }
        var loaded = Tables()
        for line in self.file?.read() ?? [] { loaded.set(line.id, line.entry) }
        tables = Mutex(loaded)
        self.file?.rewrite(loaded.entries.map { Line(id: $0.key, entry: $0.value) })
    }

    /// The entry of `id`, if known.
    func entry(_ id: ItemID) -> Entry? {
        tables.withLock { $0.entries[id] }
    }

    /// The id last recorded at a place: how an item Folio made keeps its id on a server that keeps no dead
    /// properties (as long as it is renamed through Folio).
    func id(in container: ContainerID, parent: ItemID?, name: String) -> ItemID? {
        tables.withLock { $0.byPlace[Place(Entry(container: container, parent: parent, name: name, isFolder: false))] }
    }

    /// The names from the container's root down to `id` (empty for the root), or `nil` if `id` or one of its
    /// ancestors is not known.
    func components(of id: ItemID?, in container: ContainerID) -> [String]? {
        guard let id, !id.isContainerRoot else { return [] }
        return tables.withLock { tables -> [String]? in
            let entries = tables.entries
            var names: [String] = []
            var current: ItemID? = id
            while let next = current, !next.isContainerRoot {
                guard let entry = entries[next], entry.container == container, names.count < 4096 else { return nil }
                names.append(entry.name)
                current = entry.parent
            }
            return names.reversed()
        }
    }

    /// Records where `id` is now.
    func record(_ id: ItemID, _ entry: Entry) {
        let changed = tables.withLock { tables -> Bool in
            guard tables.entries[id] != entry else { return false }
            tables.set(id, entry)
            return true
        }
        if changed { append(Line(id: id, entry: entry)) }
    }

    /// Records where a listing found `id`: its place, keeping what a write of it under way recorded
    /// (``Entry/pendingWrite``, ``Entry/movingTo``), which a listing knows nothing of. A poll that lists the folder
    /// between a replacement's `PUT` and its retry must not make the retry take its own bytes for another writer's.
    func recordListed(_ id: ItemID, _ place: Entry) {
        let recorded = tables.withLock { tables -> Entry? in
            var entry = place
            if let old = tables.entries[id] { (entry.pendingWrite, entry.movingTo) = (old.pendingWrite, old.movingTo) }
            guard tables.entries[id] != entry else { return nil }
            tables.set(id, entry)
            return entry
        }
        if let recorded { append(Line(id: id, entry: recorded)) }
    }

    /// Moves what is recorded below `folder` to `container` (the folder itself is recorded by the caller): a
    /// folder moved to another container takes its children along. Costs a pass over the index (such moves are rare).
    func moveDescendants(of folder: ItemID, to container: ContainerID) {
        var moved: [(ItemID, Entry)] = []
        tables.withLock { tables in
            var pending = [folder]
            while let parent = pending.popLast() {
                for (id, entry) in tables.entries where entry.parent == parent && entry.container != container {
                    var entry = entry
                    entry.container = container
                    tables.set(id, entry)
                    moved.append((id, entry))
                    if entry.isFolder { pending.append(id) }
                }
            }
        }
        for (id, entry) in moved { append(Line(id: id, entry: entry)) }
    }

    /// Forgets `id` (deleted).
    func remove(_ id: ItemID) {
        let removed = tables.withLock { tables -> Bool in
            guard tables.entries[id] != nil else { return false }
            tables.set(id, nil)
            return true
        }
        if removed { append(Line(id: id, entry: nil)) }
    }

    private func append(_ line: Line) {
        file?.append([line])
    }
}
