import CFUSE
import FolioCore
import Glibc
import Logging
import Synchronization

/// How the adapter answers the replay thread's requests while one change is replayed: as if the change had
/// not happened yet, so the operation the thread asks for succeeds in the kernel and fires its inotify events,
/// while nothing reaches the core (the change is already there) or the provider.
struct ReplayScript: Sendable {
    /// A name in a folder (core inodes).
    struct Name: Hashable, Sendable {
        var parent: UInt64
        var name: String
    }

    /// The file handle of an open made by a replay (never a core handle).
    static let handle = UInt64.max

    /// Names the change creates or moves an item to: lookups do not find them, creates answer with the item.
    var absent: Set<Name> = []
    /// Names the change removes or moves an item away from: lookups find the item, with these attributes.
    var present: [Name: Attributes] = [:]
}

/// Replays remote changes through one mount, so that programs watching the mount with inotify (file
/// managers, editors, `inotifywait`) see them: the kernel fires inotify events only for operations that pass
/// through the mount, never for cache invalidations (see ``ReplayedChange``).
///
/// Each change becomes one system call on the mount (`mknod`, `mkdir`, `symlink`, `rename`, `unlink`,
/// `rmdir`; `utimensat` and an open for writing for a changed item) made from the notifier's thread, never
/// from a request handler. Requests carry the calling thread's id, so the adapter recognizes the replay's own
/// requests and answers them from the ``ReplayScript`` without changing anything: nothing is uploaded again,
/// and a changed placeholder is not downloaded.
final class ChangeReplayer: Sendable {
    private struct Running {
        /// The thread replaying now (0: none).
        var thread: Int32 = 0
        var script = ReplayScript()
    }

    private let running = Mutex(Running())
    private let fileSystem: FolioFileSystem
    private let mountpoint: String
    private let rootIno: UInt64
    private let logger: Logger

    init(fileSystem: FolioFileSystem, mountpoint: String, rootIno: UInt64, logger: Logger) {
        self.fileSystem = fileSystem
        self.mountpoint = mountpoint
        self.rootIno = rootIno
        self.logger = logger
    }

    /// The script for a request sent by thread `tid`, if that is the thread replaying now.
    func script(forThread tid: Int32) -> ReplayScript? {
        running.withLock { $0.thread != 0 && $0.thread == tid ? $0.script : nil }
    }

    /// Performs `change` on the mount from the calling thread. `invalidate` drops a name from the kernel's
    /// caches first (a process may have looked it up since the core applied the change).
    func perform(_ change: ReplayedChange, invalidate: (UInt64, String) -> Void) {
        var script = ReplayScript()
        switch change {
        case .created(let parent, let name, let kind):
            guard watchable(parent), let path = path(of: parent, name) else { return }
            script.absent.insert(.init(parent: parent, name: name))
            invalidate(parent, name)
            run(script, "create of \(path)") {
                switch kind {
                case .directory: return mkdir(path, 0o755)
                case .symlink: return symlink(".", path)
                default: return mknod(path, S_IFREG | 0o644, 0)
                }
            }
        case .removed(let parent, let name, let attributes):
            guard watchable(parent, attributes.ino), let path = path(of: parent, name) else { return }
            script.present[.init(parent: parent, name: name)] = current(attributes)
            invalidate(parent, name)
            run(script, "delete of \(path)") { attributes.kind == .directory ? rmdir(path) : unlink(path) }
        case .moved(let fromParent, let fromName, let toParent, let toName, let attributes):
            guard watchable(fromParent, toParent, attributes.ino), let from = path(of: fromParent, fromName),
                  let to = path(of: toParent, toName) else { return }
            script.present[.init(parent: fromParent, name: fromName)] = current(attributes)
            script.absent.insert(.init(parent: toParent, name: toName))
            invalidate(fromParent, fromName)
            invalidate(toParent, toName)
            run(script, "move of \(from) to \(to)") { rename(from, to) }
        case .changed(let ino, let content):
            guard let parent = fileSystem.node(ino)?.parent, watchable(parent, ino),
                  let relative = fileSystem.path(of: ino, below: rootIno), !relative.isEmpty,
                  let attributes = try? fileSystem.getAttributes(ino) else { return }
            let path = mountpoint + "/" + relative
            run(script, "change of \(path)") {
                // ATTRIB: the modification time, set to what it is.
                var times = [timespec(tv_sec: 0, tv_nsec: cfuse_utime_omit), attributes.modificationTime.timespecValue]
                return utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
            }
            guard content, attributes.kind == .file else { return }
            run(script, "open of \(path)") {
                // OPEN and CLOSE_WRITE, which editors and file managers take as "saved".
                let fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
                guard fd >= 0 else { return -1 }
                return close(fd)
            }
        }
    }

    /// Whether a program can be watching one of `inos`: an inode the kernel never looked up (a folder nobody
    /// opened) has no watch, so a change there is not replayed (a remote tree copied into an unvisited folder
    /// costs nothing).
    private func watchable(_ inos: UInt64...) -> Bool {
        inos.contains { $0 == rootIno || fileSystem.isKnownToKernel($0) }
    }

    /// The path on the mount of `name` in `parent`, or `nil` if `parent` is not in this mount's view.
    private func path(of parent: UInt64, _ name: String) -> String? {
        guard let relative = fileSystem.path(of: parent, below: rootIno) else { return nil }
        return relative.isEmpty ? "\(mountpoint)/\(name)" : "\(mountpoint)/\(relative)/\(name)"
    }

    /// The item's attributes now, if the core still has it (an open file outlives its delete).
    private func current(_ attributes: Attributes) -> Attributes {
        (try? fileSystem.getAttributes(attributes.ino)) ?? attributes
    }

    /// Runs one system call with `script` in force for this thread's requests.
    private func run(_ script: ReplayScript, _ description: @autoclosure () -> String, _ call: () -> Int32) {
        running.withLock { $0 = Running(thread: cfuse_gettid(), script: script) }
        let result = call()
        let error = errno
        running.withLock { $0 = Running() }
        if result != 0 {
            logger.debug("replaying the \(description()) on the mount failed: \(String(cString: strerror(error)))")
        }
    }
}
