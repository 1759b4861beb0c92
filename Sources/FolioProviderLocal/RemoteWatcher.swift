import Foundation
import Synchronization
import SystemPackage

/// The local provider's watch on its remote folder: inotify on the folders the provider has listed, so that a
/// change made by hand (a person editing the folder) or by another Folio process is known without looking at
/// every file again. Reports that something changed (``stream``, push) and remembers which folders changed
/// (``takeChangedFolders(under:)``): the folder an entry was created, changed, renamed or deleted in, and for a
/// change of a folder's own attributes its parent too.
///
/// Only the remote's folder (and `others`: an adopted folder's app containers) is watched from the start; every
/// other folder is watched when the provider lists it (``watch(_:)``, called before the listing reads it), so
/// starting costs nothing in proportion to the remote: a folder never listed has no baseline to compare with,
/// and its changes come with its parent's listing. A watched folder moved elsewhere keeps its watch (inotify
/// follows the inode): moved into a watched folder, it is watched under its new path, and so are the watched
/// folders below it (their paths are rewritten, nothing is read), and it is reported as changed with them;
/// moved anywhere else (out of the remote, to a Trash, into a folder never listed), it and the watched folders
/// below it are watched no more, until listed again. When the kernel's queue overflowed, and once
/// when the watcher starts, every listed folder may have changed: ``takeChangedFolders(under:)`` says so once
/// per container.
///
/// Events are read by a thread of the watcher and also by ``takeChangedFolders(under:)`` itself, under one lock,
/// so a change made before that call returned to the kernel is always in its answer.
final class RemoteWatcher: Sendable {
    /// The folders that changed, and the containers' directories that took the news of the last overflow.
    private struct Changed {
        var folders: Set<String> = []
        var overflowed = true  // at the start: anything may have changed before the watches were in place
        var overflowTakenBy: Set<String> = []
    }

    private let root: FilePath
    /// More folders watched from the start (an adopted folder's app containers).
    private let others: [FilePath]
    private let descriptor: Int32
    private let stopped = Atomic<Bool>(false)
    /// The watched folders.
    private let watched = Mutex(WatchTable())
    /// What changed since it was last taken. Lock order: `reading`, then `changed` or `watched`.
    private let changed = Mutex(Changed())
    /// Held while events are read and recorded (the thread's reads and ``takeChangedFolders(under:)``'s): the
    /// buffer, and whether the descriptor was closed (the watcher stopped).
    private let reading = Mutex<(buffer: [UInt8], closed: Bool)>(([UInt8](repeating: 0, count: 64 << 10), false))
    /// Whether some folder could not be watched (no watch left): then the watcher does not see everything.
    let missesFolders = Atomic<Bool>(false)
    /// Set when the remote's folder lost its watch (unmounted, deleted, moved away; see ``seesTheRemote``).
    private let lostRoot = Atomic<Bool>(false)
    /// The remote's folder as it was when watching started (device and inode).
    private let rootStatus: FileStatus?
    private let continuation: AsyncStream<Void>.Continuation
    /// The notifications.
    let stream: AsyncStream<Void>

    /// For tests: how many paths the watcher looked at on disk to follow moves (a `stat` or a `readdir` each).
    let pathsLookedAt = Atomic<Int>(0)

    /// At most this many watches (for tests: the kernel's `fs.inotify.max_user_watches` otherwise).
    private let watchLimit: Int

    /// Starts watching `root` and `others`; `nil` if inotify is not available (the provider is then only polled).
    init?(root: FilePath, alsoWatching others: [FilePath] = [], watchLimit: Int = .max) {
        self.watchLimit = watchLimit
        rootStatus = try? SystemCalls.statusIfPresent(root)
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        self.root = root
        self.others = others
        self.descriptor = descriptor
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        for folder in [root] + others { _ = addWatch(folder.string) }
        let thread = Thread { [self] in run() }
        thread.name = "folio-remote-watcher"
        thread.start()
        // The start is news too (a listed folder may have changed before its watch): taken in at once, not at
        // the next event or poll.
        continuation.yield(())
    }

    /// Stops watching (the thread ends within half a second).
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func run() {
        while !stopped.load(ordering: .relaxed) {
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 500) > 0 else { continue }
            if readEvents() { continuation.yield(()) }
        }
        continuation.finish()
        reading.withLock { reading in
            close(descriptor)
            reading.closed = true
        }
    }

    /// What one read of the queued events found.
    private struct Batch {
        /// Whether there was any event.
        var sawChange = false
        /// The folders that changed, at their paths when the event was read.
        var folders: Set<String> = []
        /// Folders moved out of a watched folder (that folder's watch, and the name), by the cookie of the move.
        var departures: [UInt32: (watch: Int32, name: String)] = [:]
        /// Folders moved into a watched folder (that folder's watch, and the name), with the cookie of the move, in
        /// the order of the events. (Paths are worked out when the moves are followed, in that order: a move of
        /// the folder moved from or to, later in the batch, is then taken into account.)
        var arrivals: [(cookie: UInt32, watch: Int32, name: String)] = []
        /// Watched folders (the remote's own excepted) that were moved: to follow, or to stop watching.
        var moved: [Int32] = []
        /// Whether the kernel's queue overflowed.
        var overflowed = false
    }

    /// Reads every event queued now and records the folders they name; whether there was any.
    private func readEvents() -> Bool {
        reading.withLock { reading in
            guard !reading.closed else { return false }
            var batch = Batch()
            while true {
                let count = reading.buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                var offset = 0
                while offset < count {
                    let event = reading.buffer.withUnsafeBytes { raw in
                        raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    }
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    offset = nameStart + Int(event.len)
                    record(event, name: reading.buffer[nameStart..<offset].prefix { $0 != 0 }, in: &batch)
                }
            }
            // Watched folders moved (with the watched folders below them) are watched under their new paths, and
            // listed again: what changed in them was reported under their old paths. One moved elsewhere (out
            // of the remote, into a folder never listed) is watched no more: a listing watches it again.
            batch.folders.formUnion(followMoves(batch))
            unwatchMovedAway(batch.moved)
            if !batch.folders.isEmpty || batch.overflowed {
                changed.withLock { changed in
                    changed.folders.formUnion(batch.folders)
                    if batch.overflowed {
                        changed.overflowed = true
                        changed.overflowTakenBy = []
                    }
                }
            }
            return batch.sawChange
        }
    }

    /// Records one event (`name`: the entry it names, empty for the watched folder itself) in `batch`.
    private func record(_ event: inotify_event, name: ArraySlice<UInt8>, in batch: inout Batch) {
        let mask = event.mask
        batch.sawChange = true
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { batch.overflowed = true }
        if mask & UInt32(IN_UNMOUNT) != 0 { lostRoot.store(true, ordering: .relaxed) }
        guard let folder = watched.withLock({ $0.paths[event.wd] }) else { return }
        let isRoot = folder == root.string || others.contains(FilePath(folder))
        if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0, isRoot {
            lostRoot.store(true, ordering: .relaxed)
        }
        batch.folders.insert(folder)
        if name.isEmpty {
            // No name: the watched folder itself changed (its attributes): its parent lists it.
            if folder != root.string { batch.folders.insert(FilePath(folder).removingLastComponent().string) }
            if mask & UInt32(IN_MOVE_SELF) != 0, !isRoot { batch.moved.append(event.wd) }
        } else if mask & UInt32(IN_ISDIR) != 0, mask & UInt32(IN_MOVED_FROM | IN_MOVED_TO) != 0 {
            let child = String(decoding: name, as: UTF8.self)
            if mask & UInt32(IN_MOVED_FROM) != 0 { batch.departures[event.cookie] = (event.wd, child) }
            if mask & UInt32(IN_MOVED_TO) != 0, !(folder == root.string && child == ".folio") {
                batch.arrivals.append((event.cookie, event.wd, child))
            }
        }
        if mask & UInt32(IN_IGNORED) != 0 { watched.withLock { $0.remove(event.wd) } }
    }

    /// Takes the folders at or below `directory` (a container's) that changed since the last call, every change
    /// made before this call included, and whether the kernel's queue overflowed (or the watcher started) since
    /// this directory last heard of it (then any folder may have changed).
    /// Folders under another watched tree inside `directory` (an adopted folder's app containers, inside the
    /// Drive's folder) are not taken: they belong to that tree's containers.
    func takeChangedFolders(under directory: FilePath) -> (paths: [FilePath], overflowed: Bool) {
        if readEvents() { continuation.yield(()) }
        let prefix = directory.string
        let elsewhere = ([root] + others).map(\.string).filter { $0.hasPrefix(prefix + "/") }
        return changed.withLock { changed in
            let taken = changed.folders.filter { folder in
                (folder == prefix || folder.hasPrefix(prefix + "/"))
                    && !elsewhere.contains { folder == $0 || folder.hasPrefix($0 + "/") }
            }
            changed.folders.subtract(taken)
            let overflowed = changed.overflowed && changed.overflowTakenBy.insert(prefix).inserted
            return (taken.map { FilePath($0) }, overflowed)
        }
    }

    /// Whether the watcher still watches the remote's folder: false once that folder was unmounted, deleted,
    /// moved away or replaced (another folder now at its path, a share mounted again): then it sees nothing of
    /// the remote and must be replaced by a new one. (An event does not always say so: a folder deleted while
    /// open has no `IN_DELETE_SELF` until closed; hence the path's device and inode are compared too.)
    var seesTheRemote: Bool {
        guard !lostRoot.load(ordering: .relaxed), let rootStatus,
            let now = try? SystemCalls.statusIfPresent(root)
        else { return false }
        return now.device == rootStatus.device && now.inode == rootStatus.inode
    }

    /// Gives back what ``takeChangedFolders(under:)`` took, when it could not be acted on (the call failed):
    /// the next call takes it again.
    func giveBack(_ taken: (paths: [FilePath], overflowed: Bool), under directory: FilePath) {
        changed.withLock { changed in
            changed.folders.formUnion(taken.paths.map(\.string))
            if taken.overflowed { changed.overflowTakenBy.remove(directory.string) }
        }
    }

    /// Watches `folder`, which the provider is about to list (a change made after this call is seen); a folder
    /// watched already is watched under this path from now on. Does nothing once the watcher stopped.
    func watch(_ folder: FilePath) {
        reading.withLock { reading in
            guard !reading.closed, !stopped.load(ordering: .relaxed) else { return }
            _ = addWatch(folder.string)
        }
    }

    /// Adds a watch for `folder` (one that has one already keeps it, under its path of now: a folder renamed is
    /// watched under its new name); whether it is watched. Out of watches (`fs.inotify.max_user_watches`), the
    /// folder is not, and ``missesFolders`` says so: changes there are found by the sweep.
    private func addWatch(_ folder: String) -> Bool {
        let mask = UInt32(
            IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF
                | IN_MOVE_SELF | IN_ONLYDIR)
        guard let key = WatchTable.FolderKey(folder) else { return false }
        let full = watched.withLock { $0.paths.count >= watchLimit && $0.folders[key] == nil }
        let watch = full ? -1 : inotify_add_watch(descriptor, folder, mask)
        if full { errno = ENOSPC }
        guard watch >= 0 else {
            if errno == ENOSPC { missesFolders.store(true, ordering: .relaxed) }
            return false
        }
        watched.withLock { $0.insert(watch, path: folder, key: key) }
        return true
    }

    /// Follows the folders moved into a watched folder in `batch`: the watches at or below the place each one left
    /// (named by the move's other half when it left a watched folder, else by the watch of the folder itself)
    /// take the paths below its new place; those new paths. Costs a look at the disk for a folder that came
    /// from a folder not watched (none for one that came from a watched folder), never a look inside one.
    private func followMoves(_ batch: Batch) -> [String] {
        var moved: [String] = []
        for (cookie, into, name) in batch.arrivals {
            guard let folder = watched.withLock({ $0.paths[into] }) else { continue }
            let path = folder + "/" + name
            var from = batch.departures[cookie].flatMap { departure in
                watched.withLock { $0.paths[departure.watch] }.map { $0 + "/" + departure.name }
            }
            if from == nil {
                pathsLookedAt.add(1, ordering: .relaxed)
                guard let key = WatchTable.FolderKey(path) else { continue }
                from = watched.withLock { $0.path(of: key) }
            }
            guard let from else { continue }  // never watched, nor anything below it
            moved += watched.withLock { $0.move(from: from, to: path) }
        }
        return moved
    }

    /// Stops watching the folders among `moved` that are no longer at their paths (those followed by
    /// ``followMoves(_:)`` are): moved out of the remote, to a Trash, into a folder not watched. The watched folders
    /// below such a folder, which moved with it, are no longer watched either. Costs a look at each of them.
    private func unwatchMovedAway(_ moved: [Int32]) {
        for watch in moved {
            guard let (path, key) = watched.withLock({ table in table.paths[watch].map { ($0, table.keys[watch]) } })
            else { continue }  // no longer watched
            pathsLookedAt.add(1, ordering: .relaxed)
            guard WatchTable.FolderKey(path) != key else { continue }  // followed to its new place
            unwatchGone(atOrBelow: path)
        }
    }

    /// Stops watching the folders at or below `folder` that the provider found gone from there (deleted, moved out
    /// of what it has seen: ``RemoteTree/settle(_:in:)``), also those no event said moved (a watched folder inside
    /// a folder never listed that was moved away). A folder still at its path keeps its watch.
    func unwatchDeparted(_ folder: FilePath) {
        reading.withLock { reading in
            guard !reading.closed else { return }
            unwatchGone(atOrBelow: folder.string)
        }
    }

    /// Stops watching each watched folder at or below `path` that is no longer at its path (the remote's own
    /// folders excepted). A look at each of them.
    private func unwatchGone(atOrBelow path: String) {
        let remoteFolders = Set(([root] + others).map(\.string))
        for (watch, watchedPath, key) in watched.withLock({ $0.watches(atOrBelow: path) })
        where !remoteFolders.contains(watchedPath) {
            pathsLookedAt.add(1, ordering: .relaxed)
            // Something watched at that path since (a folder made there, and listed) keeps its watch.
            guard WatchTable.FolderKey(watchedPath) != key else { continue }
            inotify_rm_watch(descriptor, watch)
            watched.withLock { $0.remove(watch) }
        }
    }
}
