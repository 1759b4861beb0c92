import FolioCore
import Foundation

extension WebDAVProvider {
    /// `webdav:JOURNAL:GENERATION`: the container's generation in the ``WebDAVJournal``.
    public func currentAnchor(in container: ContainerID) async throws -> SyncAnchor {
        anchor(journal.generation(container))
    }

    func anchor(_ generation: Int) -> SyncAnchor {
        SyncAnchor("webdav:\(journal.identity):\(generation)")
    }

    /// What changed in the working set since `anchor`: each folder the core has listed is listed again
    /// (`PROPFIND Depth: 1`, one request per folder, nothing else on the server), what differs from its last
    /// listing joins the journal, and the journal answers: items changed after the anchor (with their state now),
    /// and items gone after it (a listed folder that is gone takes what was known below it along). An item
    /// missing from its folder and found in another listed folder moved; one found nowhere is gone from what Folio
    /// knows. An anchor of another journal, or one the journal no longer reaches back to, is `.anchorExpired`.
    /// One call lists one level of the working set (``changePasses``), parents before children, and answers with
    /// ``RemoteChanges/moreComing`` while levels are left: the caller shows what a level found before the next is
    /// listed. A folder listed less than ``WebDAVConfiguration/freshListing`` ago is not listed again (a reader's
    /// enumeration of a big folder is not followed at once by the same `PROPFIND` from the poll).
    public func changes(in container: ContainerID, since anchor: SyncAnchor) async throws -> RemoteChanges {
        let parts = anchor.rawValue.split(separator: ":")
        guard parts.count == 3, parts[0] == "webdav", parts[1] == journal.identity, let generation = Int(parts[2]),
            journal.canAnswer(container, since: generation)
        else {
            throw FolioError.anchorExpired("\(anchor.rawValue) is not an anchor of this WebDAV journal")
        }
        // Level by level, parents before children (a folder that is gone is found before its children are asked
        // for), a few folders at a time.
        var levels = changePasses.withLock { $0.removeValue(forKey: container) } ?? {
            let byDepth = Dictionary(grouping: journal.listedFolders(container)) {
                index.components(of: $0, in: container)?.count ?? 0
            }
            return byDepth.keys.sorted().map { byDepth[$0] ?? [] }
        }()
        if !levels.isEmpty {
            let listed = journal.listedFolders(container)
            let fresh = freshFolders()
            let folders = levels.removeFirst().filter { listed.contains($0) && !fresh.contains($0) }
            if let error = await relist(folders, in: container) { throw error }  // the next call starts over
        }
        if !levels.isEmpty { changePasses.withLock { $0[container] = levels } }
        let now = journal.generation(container)
        let (updated, deleted) = journal.changes(container, since: generation)
        for id in deleted where index.entry(id)?.container == container && journal.item(id, in: container) == nil {
            index.remove(id)
        }
        return RemoteChanges(updated: updated, deleted: deleted, anchor: self.anchor(now), moreComing: !levels.isEmpty)
    }

    /// The folders whose last listing began less than ``WebDAVConfiguration/freshListing`` ago; older listings are
    /// forgotten (they no longer matter), so the record holds only the folders of the last window.
    private func freshFolders() -> Set<ItemID> {
        let window = client.configuration.freshListing
        guard window > .zero else { return [] }
        let now = ContinuousClock.now
        return listingStarts.withLock { starts in
            starts = starts.filter { now - $0.value < window }
            return Set(starts.keys)
        }
    }

    /// How many folders are listed at once when looking for changes.
    static let concurrentListings = 4

    /// Lists `folders` again, ``concurrentListings`` at a time; returns the first error that is not a folder gone.
    private func relist(_ folders: [ItemID], in container: ContainerID) async -> FolioError? {
        await withTaskGroup(of: FolioError?.self) { group in
            var pending = folders[...]
            var running = 0
            var failure: FolioError?
            while failure == nil, !pending.isEmpty || running > 0 {
                while running < Self.concurrentListings, let folder = pending.popFirst() {
                    group.addTask { await self.relist(folder, in: container) }
                    running += 1
                }
                if let done = await group.next() {
                    running -= 1
                    failure = failure ?? done
                }
            }
            group.cancelAll()
            return failure
        }
    }

    /// Lists `folder` again into the journal; a folder that is gone is recorded as gone. Returns any other error.
    private func relist(_ folder: ItemID, in container: ContainerID) async -> FolioError? {
        do {
            _ = try await list(folder, in: container)
            return nil
        } catch {
            switch error {
            case .notFound where folder.isContainerRoot:
                // A container's root gone is a server that is not what it was, never "everything deleted".
                return .offline("the container \(container) is missing on the server (\(error)); nothing was changed")
            case .notFound, .notDirectory:
                journal.folderGone(folder, in: container)
                return nil
            default:
                return error
            }
        }
    }

    /// Records a change Folio made itself in the journal and the index.
    func noteOwnChange(_ item: RemoteItem, replacing old: (id: ItemID, parent: ItemID?)? = nil) {
        index.record(item.id, .init(
            container: item.container, parent: item.parentID, name: item.name, isFolder: item.kind == .directory))
        journal.changed(item)
    }

    /// Records a folder made here: known whole (listed, empty) from the start.
    func noteOwnFolder(_ item: RemoteItem) {
        index.record(item.id, .init(container: item.container, parent: item.parentID, name: item.name, isFolder: true))
        journal.changed(item, madeHere: true)
    }

    /// Records the deletion of an item Folio made itself.
    func noteOwnDeletion(_ id: ItemID, in container: ContainerID, parent: ItemID?) {
        index.remove(id)
        journal.deleted(id, in: container)
    }
}
