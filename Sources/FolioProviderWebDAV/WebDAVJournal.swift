import FolioCore
import Foundation
import Synchronization

/// The change history of the working set, which a WebDAV server without `sync-collection` does not keep: the
/// items of every folder Folio listed, each with the generation in which it last changed, and the generation in
/// which each known item went away. A change found by listing a folder again, or made through the provider,
/// starts a new generation; an anchor is a generation, so ``WebDAVProvider/changes(in:since:)`` reports what
/// changed after any anchor this journal gave (including changes made through this provider, which the core
/// takes as echoes), also after a restart: the journal is kept in the mount's state folder as JSON lines,
/// appended to and compacted when loaded.
final class WebDAVJournal: Sendable {
    /// One container's history.
    struct History: Sendable {
        var generation = 0
        /// Anchors older than this cannot be answered (tombstones before it were trimmed).
        var oldest = 0
        var items: [ItemID: Record] = [:]
        var deleted: [ItemID: Int] = [:]
        /// The folders whose children are known (listed, or made here), by folder id (root included).
        var listed: Set<ItemID> = []
        /// Known children by folder.
        var children: [ItemID: Set<ItemID>] = [:]
    }

    /// A known item and the generation it last changed in.
    struct Record: Codable, Sendable, Equatable {
        var item: RemoteItem
        var changed: Int
    }

    private struct Line: JSONLineWritable {
        var container: ContainerID
        var generation: Int
        var item: RemoteItem?
        var deleted: ItemID?
        var listed: ItemID?
        var unlisted: ItemID?
        var journal: String?

        func write(to writer: inout JSONLineWriter) {
            writer.object { writer in
                writer.member("container", container)
                writer.member("generation", generation)
                writer.member("item", item)
                writer.member("deleted", deleted)
                writer.member("listed", listed)
                writer.member("unlisted", unlisted)
                writer.member("journal", journal)
            }
        }
    }

    /// Which journal anchors belong to (a fresh one after the state folder was lost).
    let identity: String
    /// The journal was started now: no earlier run kept one in this state folder.
    let isNew: Bool
    private let histories: Mutex<[ContainerID: History]>
    private let file: JSONLinesFile<Line>?
    /// How many generations of tombstones are kept.
    static let keptGenerations = 100_000

    /// A journal kept in `file` (`nil`: in memory only).
    init(file: URL?) {
        self.file = file.map { JSONLinesFile($0) }
        var loaded: [ContainerID: History] = [:]
        var identity: String?
        for line in self.file?.read() ?? [] {
            if let journal = line.journal {
                identity = journal
                continue
            }
            Self.apply(line, to: &loaded[line.container, default: History()])
        }
        self.identity = identity ?? UUID().uuidString.lowercased()
        isNew = identity == nil
        histories = Mutex(loaded)
        self.file?.rewrite(compacted(loaded))
    }

    private static func apply(_ line: Line, to history: inout History) {
        history.generation = max(history.generation, line.generation)
        if let item = line.item {
            if let old = history.items[item.id] {
                history.children[old.item.parentID ?? .root(of: item.container)]?.remove(item.id)
            }
            history.items[item.id] = Record(item: item, changed: line.generation)
            history.children[item.parentID ?? .root(of: item.container), default: []].insert(item.id)
            history.deleted[item.id] = nil
        }
        if let id = line.deleted {
            if let old = history.items.removeValue(forKey: id) {
                history.children[old.item.parentID ?? .root(of: old.item.container)]?.remove(id)
            }
            history.deleted[id] = line.generation
            if history.listed.remove(id) != nil {
                history.children[id] = nil
            }
        }
        if let folder = line.listed { history.listed.insert(folder) }
        if let folder = line.unlisted {
            history.listed.remove(folder)
            for child in history.children[folder] ?? [] { history.items[child] = nil }
            history.children[folder] = nil
        }
    }

    /// The container's generation now.
    func generation(_ container: ContainerID) -> Int {
        histories.withLock { $0[container]?.generation ?? 0 }
    }

    /// Whether changes after `generation` can be answered.
    func canAnswer(_ container: ContainerID, since generation: Int) -> Bool {
        histories.withLock { histories in
            let history = histories[container] ?? History()
            return generation >= history.oldest && generation <= history.generation
        }
    }

    /// The folders of the working set.
    func listedFolders(_ container: ContainerID) -> Set<ItemID> {
        histories.withLock { $0[container]?.listed ?? [] }
    }

    /// The known item `id`, if in the working set.
    func item(_ id: ItemID, in container: ContainerID) -> RemoteItem? {
        histories.withLock { $0[container]?.items[id]?.item }
    }

    /// Takes a listing of `folder` made from generation `startedAt` on: new and changed children, and children
    /// gone from it, start a generation. What changed in the journal after the listing began (a change made through
    /// the provider meanwhile) is newer than the listing and stays as it is. Returns the children as they are known
    /// now: the listing's, with those changed meanwhile as the journal has them and those deleted meanwhile left out.
    @discardableResult
    func took(
        listing children: [RemoteItem], of folder: ItemID, in container: ContainerID, startedAt: Int
    ) -> [RemoteItem] {
        var lines: [Line] = []
        var known: [RemoteItem] = []
        histories.withLock { histories in
            var history = histories[container] ?? History()
            let next = history.generation + 1
            if !history.listed.contains(folder) {
                lines.append(Line(container: container, generation: history.generation, listed: folder))
            }
            let before = history.children[folder] ?? []
            let now = Set(children.map(\.id))
            for child in children {
                if let deleted = history.deleted[child.id], deleted > startedAt { continue }  // deleted meanwhile
                if let record = history.items[child.id], record.changed > startedAt {
                    // Changed meanwhile: newer than this listing (and maybe moved elsewhere).
                    if record.item.parentID ?? .root(of: container) == folder { known.append(record.item) }
                    continue
                }
                known.append(child)
                if history.items[child.id]?.item != child {
                    lines.append(Line(container: container, generation: next, item: child))
                }
            }
            for gone in before.subtracting(now) {
                guard let record = history.items[gone] else { continue }
                // Changed meanwhile (made here after the listing began), or moved to another known folder (reported
                // there): not gone. Otherwise it is gone from what Folio knows.
                if record.changed > startedAt || record.item.parentID ?? .root(of: container) != folder { continue }
                lines.append(Line(container: container, generation: next, deleted: gone))
            }
            for line in lines { Self.apply(line, to: &history) }
            histories[container] = history
        }
        append(lines)
        return known
    }

    /// A folder of the working set is gone from the server: it and what was known below it are deleted.
    func folderGone(_ folder: ItemID, in container: ContainerID) {
        var lines: [Line] = []
        histories.withLock { histories in
            var history = histories[container] ?? History()
            let next = history.generation + 1
            var pending = [folder]
            while let current = pending.popLast() {
                if !current.isContainerRoot {
                    lines.append(Line(container: container, generation: next, deleted: current))
                }
                pending += history.children[current] ?? []
                if current.isContainerRoot {
                    lines.append(Line(container: container, generation: next, unlisted: current))
                }
            }
            for line in lines { Self.apply(line, to: &history) }
            histories[container] = history
        }
        append(lines)
    }

    /// A change made through the provider: the item as it is now.
    func changed(_ item: RemoteItem, madeHere isNewFolder: Bool = false) {
        var lines: [Line] = []
        histories.withLock { histories in
            var history = histories[item.container] ?? History()
            let next = history.generation + 1
            let parent = item.parentID ?? .root(of: item.container)
            if history.listed.contains(parent) || history.items[item.id] != nil {
                lines.append(Line(container: item.container, generation: next, item: item))
            }
            if isNewFolder { lines.append(Line(container: item.container, generation: next, listed: item.id)) }
            for line in lines { Self.apply(line, to: &history) }
            histories[item.container] = history
        }
        append(lines)
    }

    /// An item deleted (or moved out of the container) through the provider.
    func deleted(_ id: ItemID, in container: ContainerID) {
        var lines: [Line] = []
        histories.withLock { histories in
            var history = histories[container] ?? History()
            lines.append(Line(container: container, generation: history.generation + 1, deleted: id))
            for line in lines { Self.apply(line, to: &history) }
            histories[container] = history
        }
        append(lines)
    }

    /// What changed after `generation`: items changed since, and items gone since.
    func changes(_ container: ContainerID, since generation: Int) -> (updated: [RemoteItem], deleted: [ItemID]) {
        histories.withLock { histories in
            let history = histories[container] ?? History()
            let updated = history.items.values.filter { $0.changed > generation }.map(\.item)
            let deleted = history.deleted.filter { $0.value > generation }.map(\.key)
            return (updated.sorted { $0.name < $1.name }, deleted.sorted { $0.rawValue < $1.rawValue })
        }
    }

    private func append(_ lines: [Line]) {
        file?.append(lines)
    }

    /// The state now as lines: the identity, then per container its folders, items and tombstones.
    private func compacted(_ histories: [ContainerID: History]) -> [Line] {
        var lines = [Line(container: .drive, generation: 0, journal: identity)]
        for (container, history) in histories {
            for folder in history.listed {
                lines.append(Line(container: container, generation: history.generation, listed: folder))
            }
            for record in history.items.values {
                lines.append(Line(container: container, generation: record.changed, item: record.item))
            }
            for (id, generation) in history.deleted where generation > history.generation - Self.keptGenerations {
                lines.append(Line(container: container, generation: generation, deleted: id))
            }
        }
        return lines
    }
}
