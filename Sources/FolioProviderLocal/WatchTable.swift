import Foundation

/// The folders a ``RemoteWatcher`` watches: the path each watch descriptor watches, and the descriptor of each
/// folder (by device and inode: a watch follows its folder when it is moved). Paths are rewritten when a move is
/// seen (``move(from:to:)``), so following a moved folder costs the watches below it, never a look at the disk.
struct WatchTable {
    /// A folder by device and inode.
    struct FolderKey: Hashable {
        var device: UInt64
        var inode: UInt64

        /// The folder at `path` (symlinks followed, as inotify does), `nil` if there is none.
        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// The path each watch watches.
    private(set) var paths: [Int32: String] = [:]
    /// The watch of each folder.
    private(set) var folders: [FolderKey: Int32] = [:]
    /// The folder each watch watches.
    private(set) var keys: [Int32: FolderKey] = [:]

    /// Records that `watch` watches the folder `key` at `path`.
    mutating func insert(_ watch: Int32, path: String, key: FolderKey) {
        if let before = keys[watch], before != key { folders[before] = nil }
        paths[watch] = path
        keys[watch] = key
        folders[key] = watch
    }

    /// Forgets `watch` (its folder is gone, or no longer watched).
    mutating func remove(_ watch: Int32) {
        paths[watch] = nil
        if let key = keys.removeValue(forKey: watch), folders[key] == watch { folders[key] = nil }
    }

    /// The path the folder `key` is watched at, if it is watched.
    func path(of key: FolderKey) -> String? {
        folders[key].flatMap { paths[$0] }
    }

    /// The watches at `path` or below it, with their paths and folders.
    func watches(atOrBelow path: String) -> [(watch: Int32, path: String, key: FolderKey)] {
        paths.compactMap { watch, watched in
            guard watched == path || watched.hasPrefix(path + "/"), let key = keys[watch] else { return nil }
            return (watch, watched, key)
        }
    }

    /// Records that the folder at `old` was moved to `new`: every watch at `old` or below it now watches the path
    /// below `new` (a folder moved takes the folders inside it along); their new paths.
    mutating func move(from old: String, to new: String) -> [String] {
        guard old != new else { return [] }
        var moved: [String] = []
        for (watch, path, _) in watches(atOrBelow: old) {
            let renamed = new + path.dropFirst(old.count)
            paths[watch] = renamed
            moved.append(renamed)
        }
        return moved
    }
}
