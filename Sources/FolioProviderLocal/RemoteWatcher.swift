import Foundation
import Synchronization
import SystemPackage

/// Push for the local provider: watches every folder of the remote with inotify and reports that something
/// changed (a person editing the folder, or another Folio mount uploading to it), and remembers which folders
/// changed (``takeChangedFolders(under:)``): the folder an entry was created, changed, renamed or deleted in,
/// and for a change of a folder's own attributes its parent too. Folio's own bookkeeping folder (`.folio`) is
/// not watched, except the app containers of an adopted folder inside it. Folders created later are watched as
/// they appear. When the kernel's queue overflowed, every folder may have changed (``takeChangedFolders(under:)``
/// says so once per container).
final class RemoteWatcher: Sendable {
    /// The folders that changed, and the containers' directories that took the news of the last overflow.
    private struct Changed {
        var folders: Set<String> = []
        var overflowed = false
        var overflowTakenBy: Set<String> = []
    }

    private let root: FilePath
    /// More folders watched with everything below them (an adopted folder's app containers).
    private let others: [FilePath]
    private let descriptor: Int32
    private let stopped = Atomic<Bool>(false)
    /// The folder each watch descriptor watches.
    private let watched = Mutex<[Int32: String]>([:])
    /// What changed since it was last taken.
    private let changed = Mutex(Changed())
    private let continuation: AsyncStream<Void>.Continuation
    /// The notifications.
    let stream: AsyncStream<Void>

    /// Starts watching `root` and `others`; `nil` if inotify is not available (the provider is then only polled).
    init?(root: FilePath, alsoWatching others: [FilePath] = []) {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        self.root = root
        self.others = others
        self.descriptor = descriptor
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        watchFolders()
        let thread = Thread { [self] in run() }
        thread.name = "folio-remote-watcher"
        thread.start()
    }

    /// Stops watching (the thread ends within half a second).
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while !stopped.load(ordering: .relaxed) {
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 500) > 0 else { continue }
            var sawFolder = false
            var sawChange = false
            var folders: Set<String> = []
            var overflowed = false
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                var offset = 0
                while offset < count {
                    let (watch, mask, nameLength) = buffer.withUnsafeBytes { raw -> (Int32, UInt32, Int) in
                        let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        return (event.wd, event.mask, Int(event.len))
                    }
                    if mask & UInt32(IN_ISDIR) != 0 || mask & UInt32(IN_Q_OVERFLOW) != 0 { sawFolder = true }
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true }
                    if let folder = watched.withLock({ $0[watch] }) {
                        folders.insert(folder)
                        // No name: the watched folder itself changed (its attributes): its parent lists it.
                        if nameLength == 0, folder != root.string {
                            folders.insert(FilePath(folder).removingLastComponent().string)
                        }
                    }
                    if mask & UInt32(IN_IGNORED) != 0 { watched.withLock { _ = $0.removeValue(forKey: watch) } }
                    sawChange = true
                    offset += MemoryLayout<inotify_event>.size + nameLength
                }
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
            if sawFolder { watchFolders() }
            if sawChange { continuation.yield(()) }
        }
        continuation.finish()
        close(descriptor)
    }

    /// Takes the folders at or below `directory` (a container's) that changed since the last call, and whether
    /// the kernel's queue overflowed since this directory last heard of it (then any folder may have changed).
    func takeChangedFolders(under directory: FilePath) -> (paths: [FilePath], overflowed: Bool) {
        let prefix = directory.string
        return changed.withLock { changed in
            let taken = changed.folders.filter { $0 == prefix || $0.hasPrefix(prefix + "/") }
            changed.folders.subtract(taken)
            let overflowed = changed.overflowed && changed.overflowTakenBy.insert(prefix).inserted
            return (taken.map { FilePath($0) }, overflowed)
        }
    }

    /// Adds a watch for every folder of the remote that has none yet (adding one twice is harmless).
    private func watchFolders() {
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_ONLYDIR)
        var stack = [root.string] + others.map(\.string)
        while let folder = stack.popLast() {
            let watch = inotify_add_watch(descriptor, folder, mask)
            if watch >= 0 { watched.withLock { $0[watch] = folder } }
            guard let names = try? SystemCalls.subfolders(FilePath(folder)) else { continue }
            for name in names where !(folder == root.string && name == ".folio") {
                stack.append(folder + "/" + name)
            }
        }
    }
}
