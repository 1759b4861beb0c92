import Foundation
import Synchronization
import SystemPackage

/// Push for the local provider: watches every folder of the remote with inotify and reports that something
/// changed (a person editing the folder, or another Folio mount uploading to it). Folio's own bookkeeping
/// folder (`.folio`) is not watched, except the app containers of an adopted folder inside it. Folders created
/// later are watched as they appear.
final class RemoteWatcher: Sendable {
    private let root: FilePath
    /// More folders watched with everything below them (an adopted folder's app containers).
    private let others: [FilePath]
    private let descriptor: Int32
    private let stopped = Atomic<Bool>(false)
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
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                var offset = 0
                while offset < count {
                    let (mask, nameLength) = buffer.withUnsafeBytes { raw -> (UInt32, Int) in
                        let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        return (event.mask, Int(event.len))
                    }
                    if mask & UInt32(IN_ISDIR) != 0 || mask & UInt32(IN_Q_OVERFLOW) != 0 { sawFolder = true }
                    sawChange = true
                    offset += MemoryLayout<inotify_event>.size + nameLength
                }
            }
            if sawFolder { watchFolders() }
            if sawChange { continuation.yield(()) }
        }
        continuation.finish()
        close(descriptor)
    }

    /// Adds a watch for every folder of the remote that has none yet (adding one twice is harmless).
    private func watchFolders() {
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_ONLYDIR)
        var stack = [root.string] + others.map(\.string)
        while let folder = stack.popLast() {
            _ = inotify_add_watch(descriptor, folder, mask)
            guard let names = try? SystemCalls.subfolders(FilePath(folder)) else { continue }
            for name in names where !(folder == root.string && name == ".folio") {
                stack.append(folder + "/" + name)
            }
        }
    }
}
