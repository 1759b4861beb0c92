import Foundation
import Synchronization
import SystemPackage

/// The local provider's watch on its remote folder: inotify on every folder, so that a change made by hand (a
/// person editing the folder) or by another Folio process is known without looking at every file again. Reports
/// that something changed (``stream``, push) and remembers which folders changed (``takeChangedFolders(under:)``):
/// the folder an entry was created, changed, renamed or deleted in, and for a change of a folder's own attributes
/// its parent too. Folio's own bookkeeping folder (`.folio`) is not watched, except the app containers of an
/// adopted folder inside it. A folder created or moved in later is watched with everything below it as it
/// appears, and reported as changed itself once watched (what was put in it before the watch is found by listing
/// it again). When the kernel's queue overflowed, and once when the watcher starts, every folder may have
/// changed: ``takeChangedFolders(under:)`` says so once per container.
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
    /// More folders watched with everything below them (an adopted folder's app containers).
    private let others: [FilePath]
    private let descriptor: Int32
    private let stopped = Atomic<Bool>(false)
    /// The folder each watch descriptor watches.
    private let watched = Mutex<[Int32: String]>([:])
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
        _ = watchSubtrees([root.string] + others.map(\.string))
        let thread = Thread { [self] in run() }
        thread.name = "folio-remote-watcher"
        thread.start()
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
                    guard let folder = watched.withLock({ $0[watch] }) else { continue }
                    let gone = UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)
                    if mask & gone != 0, folder == root.string || others.contains(FilePath(folder)) {
                        lostRoot.store(true, ordering: .relaxed)
                    }
                    folders.insert(folder)
                    if nameLength == 0 {
                        // No name: the watched folder itself changed (its attributes): its parent lists it.
                        if folder != root.string { folders.insert(FilePath(folder).removingLastComponent().string) }
                    } else if mask & UInt32(IN_ISDIR) != 0, mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                        let name = reading.buffer[nameStart..<nameStart + nameLength].prefix { $0 != 0 }
                        let child = String(decoding: name, as: UTF8.self)
                        if !(folder == root.string && child == ".folio") { appeared.append(folder + "/" + child) }
                    }
                    if mask & UInt32(IN_IGNORED) != 0 { watched.withLock { _ = $0.removeValue(forKey: watch) } }
                }
            }
            if overflowed {
                _ = watchSubtrees([root.string] + others.map(\.string))  // whatever appeared meanwhile
            } else {
                // Watched with everything below (a folder moved in brings its own), and listed again once
                // watched: what was put in it before its watch existed is found that way.
                folders.formUnion(watchSubtrees(appeared))
            }
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

    /// Adds a watch for every folder at or below `folders` (one that has one already keeps it, under its path of
    /// now: a folder renamed is watched under its new name); the folders watched.
    private func watchSubtrees(_ folders: [String]) -> [String] {
        let mask = UInt32(
            IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF
                | IN_MOVE_SELF | IN_ONLYDIR)
        var stack = folders
        var done: [String] = []
        while let folder = stack.popLast() {
            let full = watched.withLock { $0.count >= watchLimit && !$0.values.contains(folder) }
            let watch = full ? -1 : inotify_add_watch(descriptor, folder, mask)
            if full { errno = ENOSPC }
            guard watch >= 0 else {
                // Out of watches (`fs.inotify.max_user_watches`): changes there are found by the sweep.
                if errno == ENOSPC { missesFolders.store(true, ordering: .relaxed) }
                continue
            }
            watched.withLock { $0[watch] = folder }
            done.append(folder)
            guard let names = try? SystemCalls.subfolders(FilePath(folder)) else { continue }
            for name in names where !(folder == root.string && name == ".folio") {
                stack.append(folder + "/" + name)
            }
        }
        return done
    }
}
