import FolioCore
import SystemPackage

extension RemoteTree {
    /// A watcher the tree does not keep alive.
    struct WatcherReference: Sendable {
        /// The watcher, while it exists.
        weak var watcher: RemoteWatcher?
    }

    /// Adds `watcher` to the ones every listed folder is watched by, and has it watch the folders listed so far
    /// (what changed in them before is found by the sweep its start asks for): work in proportion to the
    /// listed folders, never to the remote.
    mutating func register(_ watcher: RemoteWatcher) {
        watchers.removeAll { $0.watcher == nil }
        watchers.append(WatcherReference(watcher: watcher))
        for folder in listedFolderPaths() { watcher.watch(folder) }
    }

    /// Has every watcher watch `folder`, which is listed next (a change made from now on is seen).
    func watchBeforeListing(_ folder: FilePath) {
        for reference in watchers { reference.watcher?.watch(folder) }
    }

    /// Has every watcher stop watching the folder `id` of `container` (and the watched folders below it) where it
    /// is no longer: called when the index forgets it (it left the container, or what this process has seen), while
    /// its place is still known. Nothing for a file (never watched). Costs a look at each watched folder there.
    func unwatchDeparted(_ id: ItemID, in container: ContainerID) {
        guard !watchers.isEmpty, let index = indexes[container], index.places[id]?.isFile == false,
            let components = index.components(of: id)
        else { return }
        var path = layout.directory(of: container)
        for component in components { path.append(component) }
        for reference in watchers { reference.watcher?.unwatchDeparted(path) }
    }

    /// Has every watcher watch every listed folder at its path of now (after a sweep that found folders moved
    /// while the watchers' news was lost).
    func watchListedFolders() {
        guard !watchers.isEmpty else { return }
        for folder in listedFolderPaths() { watchBeforeListing(folder) }
    }

    /// The paths of the folders listed in this process, in every container, as the index places them.
    private func listedFolderPaths() -> [FilePath] {
        var paths: [FilePath] = []
        for (container, index) in indexes {
            let base = layout.directory(of: container)
            for folder in index.listings.keys {
                guard let folder else {
                    paths.append(base)
                    continue
                }
                guard let components = index.components(of: folder) else { continue }
                var path = base
                for component in components { path.append(component) }
                paths.append(path)
            }
        }
        return paths
    }
}
