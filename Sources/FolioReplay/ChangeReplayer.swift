import Dispatch
import FolioCore
import FolioFUSE
import Logging
import Synchronization

/// Replays remote changes through one mount, so that programs watching the mount with inotify (file managers,
/// editors, `inotifywait`) see them: the kernel fires inotify events only for operations that pass through the
/// mount, never for cache invalidations (see ``ReplayedChange``).
///
/// Each change becomes one system call on the mount (`mknod`, `mkdir`, `symlink`, `rename`, `unlink`, `rmdir`;
/// `utimensat`, and an open for writing for new content), made by the ``ReplayHelper`` process from the replay's
/// own queue, never from a request handler. It is the mount's ``FUSEFront``: requests carry the calling process,
/// so it recognizes the helper's and answers them from the ``ReplayScript`` before any handler sees them, changing
/// nothing: nothing is uploaded again, and a changed placeholder is not downloaded.
public final class ChangeReplayer: FUSEFront {
    /// One operation to replay: the script the helper's requests are answered from meanwhile, and the names
    /// dropped from the kernel's caches just before (a process may have looked them up since the core applied the
    /// change).
    struct Step {
        var operation: ReplayOperation
        var script = ReplayScript()
        var invalidations: [ReplayScript.Name] = []

        /// The paths the operation touches.
        var paths: [String] { [operation.path] + (operation.destination.map { [$0] } ?? []) }
        /// The names its script speaks of.
        var names: Set<ReplayScript.Name> { script.absent.union(script.present.keys) }
    }

    /// Operations handed to the helper at once, with one script that is the union of theirs: none of them touches
    /// a path or a name another one does.
    private struct Batch {
        var steps: [Step] = []
        var paths: Set<String> = []
        var names: Set<ReplayScript.Name> = []

        func accepts(_ step: Step) -> Bool {
            steps.count < ChangeReplayer.batchSize && names.isDisjoint(with: step.names)
                && !step.paths.contains(where: paths.contains)
        }

        mutating func add(_ step: Step) {
            steps.append(step)
            paths.formUnion(step.paths)
            names.formUnion(step.names)
        }
    }

    /// The mount as the replay knows it once it is up: its device, and how to drop a name from its kernel caches.
    private struct Mounted {
        var device: String?
        var dropEntry: @Sendable (UInt64, String) -> Void
    }

    /// How many operations the helper is given at once at most.
    static let batchSize = 256
    /// How many changes at once make the replayer look for watches first.
    static let scanThreshold = 64
    /// How many times an operation that raced with a lookup in its batch is made again alone at most.
    static let attemptsAlone = 3

    /// Replays wait for the helper: on a queue of their own, so they never hold up an invalidation.
    private let queue = DispatchQueue(label: "folio.change-replayer")
    /// Remote changes not replayed yet, in order: a burst (a folder's first listing of 10,000 new files) is
    /// replayed by one drain, which lets the replayer hand the helper many operations at once.
    private let pending = Mutex<[ReplayedChange]>([])
    /// The script in force for the helper's requests.
    private let script = Mutex(ReplayScript())
    /// Set while the mount is up.
    private let mount = Mutex<Mounted?>(nil)
    private let helper: ReplayHelperLink
    let fileSystem: FolioFileSystem
    /// The core's inode shown as the mount's root.
    let rootIno: UInt64
    /// The mount lets other users in (`allow_other`): their processes may watch it (``InotifyWatches``).
    private let othersMayUse: Bool
    private let logger: Logger

    /// A replayer for the mount of `fileSystem` at `mountpoint` whose root is `rootIno`; `helperCommand` starts the
    /// helper (`folio replay-helper`, to which the mountpoint and the mount's device are added).
    public init(
        fileSystem: FolioFileSystem, mountpoint: String, rootIno: UInt64, helperCommand: [String],
        othersMayUse: Bool = false, logger: Logger
    ) {
        self.fileSystem = fileSystem
        self.rootIno = rootIno
        self.othersMayUse = othersMayUse
        self.logger = logger
        helper = ReplayHelperLink(command: helperCommand, mountpoint: mountpoint, logger: logger)
    }

    /// The script for a request sent by process `pid`, if that is a replay helper.
    func script(forProcess pid: Int32) -> ReplayScript? {
        helper.isHelper(pid) ? script.withLock { $0 } : nil
    }

    public func mounted(device: String?, dropEntry: @escaping @Sendable (_ parent: UInt64, _ name: String) -> Void) {
        mount.withLock { $0 = Mounted(device: device, dropEntry: dropEntry) }
    }

    public func replay(_ changes: [ReplayedChange]) {
        let first = pending.withLock { list in
            list += changes
            return list.count == changes.count
        }
        guard first else { return }
        queue.async { [self] in
            let changes = pending.withLock { list in
                defer { list = [] }
                return list
            }
            guard let mounted = mount.withLock({ $0 }) else { return }
            perform(changes, device: mounted.device, invalidate: mounted.dropEntry)
        }
    }

    public func stop() {
        helper.stop()
    }

    public func detach() {
        stop()
        mount.withLock { $0 = nil }
        queue.async { [helper] in helper.finish() }
    }

    /// Replays `changes`, in order (on the replay's queue). `invalidate` drops a name from the kernel's caches.
    /// Consecutive operations that touch different names go to the helper together (one write, then their
    /// answers): a folder's first listing of 10,000 new files no longer waits for a round trip each.
    ///
    /// A burst (at least ``scanThreshold`` changes) is replayed only where a program watches (``InotifyWatches``):
    /// the folder's first listing of 10,000 files nobody watches no longer makes 10,000 operations on the mount
    /// while `ls` waits for the same folder. A watch added after the scan comes with a listing of its own, which
    /// shows what the scan left out.
    private func perform(_ changes: [ReplayedChange], device: String?, invalidate: (UInt64, String) -> Void) {
        var watched: InotifyWatches?
        var scanned = false
        if changes.count >= Self.scanThreshold, let device {
            watched = InotifyWatches.scan(device: device, othersMayUse: othersMayUse)
            scanned = true
        }
        var batch = Batch()
        var skipped = 0
        for change in changes {
            var steps = steps(for: change, watched: watched)
            if steps.isEmpty, !batch.steps.isEmpty, watched.map({ isWatched(change, $0) }) ?? true {
                // Maybe in a folder an earlier operation of the batch makes (the kernel learns of it then).
                run(batch.steps, device: device, invalidate: invalidate)
                batch = Batch()
                steps = self.steps(for: change, watched: watched)
            }
            if steps.isEmpty { skipped += 1 }
            for step in steps {
                if !batch.accepts(step) {
                    run(batch.steps, device: device, invalidate: invalidate)
                    batch = Batch()
                }
                batch.add(step)
            }
        }
        run(batch.steps, device: device, invalidate: invalidate)
        if scanned {
            let watches = watched.map { "\($0.inodes.count) watched inodes" }
                ?? "any may be: fanotify in use, or processes it cannot look into"
            logger.info(.init(stringLiteral: "replayed \(changes.count - skipped) of \(changes.count) remote changes: "
                + "where a program watches (\(watches))"))
        }
    }

    /// Drops the batch's names from the kernel's caches and has the helper make its operations. A name looked up
    /// again by another process between its drop and its operation is in the kernel's cache once more (the
    /// operation fails, firing nothing): such an operation is made once more alone, its names dropped right
    /// before it, as a single change always was.
    private func run(_ steps: [Step], device: String?, invalidate: (UInt64, String) -> Void) {
        guard !steps.isEmpty else { return }
        var union = ReplayScript()
        for step in steps {
            union.absent.formUnion(step.script.absent)
            union.present.merge(step.script.present) { first, _ in first }
            for name in step.invalidations { invalidate(name.parent, name.name) }
        }
        let answers = send(steps.map(\.operation), union, device: device)
        guard steps.count > 1 else { return }
        for (step, answer) in zip(steps, answers) where answer.raced {
            // Alone, the window is one operation wide; a reader walking the folder can still hit it, so a few times.
            for _ in 0..<Self.attemptsAlone {
                for name in step.invalidations { invalidate(name.parent, name.name) }
                guard send([step.operation], step.script, device: device).first?.raced == true else { break }
            }
        }
    }

    /// Has the helper make `operations` with `script` in force for its requests meanwhile.
    private func send(_ operations: [ReplayOperation], _ script: ReplayScript, device: String?) -> [ReplayAnswer] {
        guard let device else { return Array(repeating: .none, count: operations.count) }
        self.script.withLock { $0 = script }
        defer { self.script.withLock { $0 = ReplayScript() } }
        return helper.send(operations, device: device)
    }
}
