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
/// follows the inode) and is watched under its new path once a watched folder reports it moved in (it is then
/// reported as changed itself, with the watched folders below it). When the kernel's queue overflowed, and once
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

    /// The watched folders: the path each watch descriptor watches, and the descriptor of each folder (by device
    /// and inode: a watch follows its folder when it is moved).
    private struct Watches {
        var paths: [Int32: String] = [:]
        var folders: [FolderKey: Int32] = [:]
        var keys: [Int32: FolderKey] = [:]

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
    }

    /// A folder by device and inode.
    private struct FolderKey: Hashable {
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

    private let root: FilePath
    /// More folders watched from the start (an adopted folder's app containers).
    private let others: [FilePath]
    private let descriptor: Int32
    private let stopped = Atomic<Bool>(false)
    /// The watched folders.
    private let watched = Mutex(Watches())
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

    /// Reads every event queued now and records the folders they name; whether there was any.
    private func readEvents() -> Bool {
        reading.withLock { reading in
            guard !reading.closed else { return false }
            var sawChange = false
            var folders: Set<String> = []
            var appeared: [String] = []
            var overflowed = false
            while true {
                let count = reading.buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                var offset = 0
                while offset < count {
                    let (watch, mask, nameLength) = reading.buffer.withUnsafeBytes { raw -> (Int32, UInt32, Int) in
                        let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        return (event.wd, event.mask, Int(event.len))
                    }
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    offset = nameStart + nameLength
                    sawChange = true
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true }
                    if mask & UInt32(IN_UNMOUNT) != 0 { lostRoot.store(true, ordering: .relaxed) }
                    guard let folder = watched.withLock({ $0.paths[watch] }) else { continue }
                    let gone = UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)
                    if mask & gone != 0, folder == root.string || others.contains(FilePath(folder)) {
                        lostRoot.store(true, ordering: .relaxed)
                    }
                    folders.insert(folder)
                    if nameLength == 0 {
                        // No name: the watched folder itself changed (its attributes): its parent lists it.
                        if folder != root.string { folders.insert(FilePath(folder).removingLastComponent().string) }
                    } else if mask & UInt32(IN_ISDIR) != 0, mask & UInt32(IN_MOVED_TO) != 0 {
                        let name = reading.buffer[nameStart..<nameStart + nameLength].prefix { $0 != 0 }
                        let child = String(decoding: name, as: UTF8.self)
                        if !(folder == root.string && child == ".folio") { appeared.append(folder + "/" + child) }
                    }
                    if mask & UInt32(IN_IGNORED) != 0 { watched.withLock { $0.remove(watch) } }
                }
            }
            // Watched folders moved in (with the one moved or below it) are watched under their new paths, and
            // listed again: what changed in them was reported under their old paths. (After an overflow, the
            // sweep lists every listed folder again, which watches each one under its path of then.)
            if !overflowed { folders.formUnion(rewatchMoved(appeared)) }
            if !folders.isEmpty || overflowed {
                changed.withLock { changed in
                    changed.folders.formUnion(folders)
                    if overflowed {
                        changed.overflowed = true
                        changed.overflowTakenBy = []
                    }
                }
            }
            return sawChange
        }
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
        guard let key = FolderKey(folder) else { return false }
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

    /// Watches under their new paths the watched folders at or below `folders` (folders moved into a watched
    /// folder); the folders watched anew. Costs a look at every folder of what was moved, none elsewhere.
    private func rewatchMoved(_ folders: [String]) -> [String] {
        var stack = folders
        var done: [String] = []
        while let folder = stack.popLast() {
            guard let key = FolderKey(folder) else { continue }
            if watched.withLock({ $0.folders[key] != nil }), addWatch(folder) { done.append(folder) }
            guard let names = try? SystemCalls.subfolders(FilePath(folder)) else { continue }
            for name in names { stack.append(folder + "/" + name) }
        }
        return done
    }
}

