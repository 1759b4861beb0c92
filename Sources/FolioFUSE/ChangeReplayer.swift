import CFUSE
import FolioCore
import Foundation
import Glibc
import Logging
import Synchronization

/// Replays remote changes through one mount, so that programs watching the mount with inotify (file
/// managers, editors, `inotifywait`) see them: the kernel fires inotify events only for operations that pass
/// through the mount, never for cache invalidations (see ``ReplayedChange``).
///
/// Each change becomes one system call on the mount (`mknod`, `mkdir`, `symlink`, `rename`, `unlink`,
/// `rmdir`; `utimensat`, and an open for writing for new content), made by the ``ReplayHelper`` process at the
/// request of the notifier's replay queue, never from a request handler. Requests carry the calling process,
/// so the adapter recognizes the helper's and answers them from the ``ReplayScript`` without changing
/// anything: nothing is uploaded again, and a changed placeholder is not downloaded.
final class ChangeReplayer: Sendable {
    private struct Helper: @unchecked Sendable {
        var process: Process
        var input: FileHandle
        var output: Int32
        var buffer: [UInt8] = []
    }

    private struct Running {
        /// The helper processes alive (requests from them are never passed to the core); a helper leaves the
        /// set once it has exited and been reaped, so its process id, free again, means nothing here.
        var helpers: Set<Int32> = []
        var script = ReplayScript()
    }

    /// How long one operation may take before the helper is given up (and replaced for the next change).
    private static let answerTimeout: Int32 = 10_000

    private let running = Mutex(Running())
    private let stopping = Atomic(false)
    /// Used from the notifier's replay queue.
    private let helper = Mutex<Helper?>(nil)
    private let fileSystem: FolioFileSystem
    private let mountpoint: String
    private let rootIno: UInt64
    private let helperCommand: [String]
    /// The mount lets other users in (`allow_other`): their processes may watch it (``InotifyWatches``).
    private let othersMayUse: Bool
    private let logger: Logger
    /// The mount's device (`major:minor`), known once mounted.
    private let device = Mutex<String?>(nil)

    init(
        fileSystem: FolioFileSystem, mountpoint: String, rootIno: UInt64, helperCommand: [String],
        othersMayUse: Bool = false, logger: Logger
    ) {
        self.fileSystem = fileSystem
        self.mountpoint = mountpoint
        self.rootIno = rootIno
        self.helperCommand = helperCommand
        self.othersMayUse = othersMayUse
        self.logger = logger
    }

    /// Records the mount's device number (the helper acts only on that mount).
    func attach(device: String) {
        self.device.withLock { $0 = device }
    }

    /// The script for a request sent by process `pid`, if that is a replay helper.
    func script(forProcess pid: Int32) -> ReplayScript? {
        running.withLock { $0.helpers.contains(pid) ? $0.script : nil }
    }

    /// Replays no more changes and stops waiting for the helper (the mount is going away: its loop may have
    /// dropped the helper's request). From any thread; ``finish()`` then ends the helper.
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
    }

    /// Ends the helper (on the notifier's replay queue, after ``stop()``): it exits when its input closes (a helper
    /// still waiting in a request to the mount, when the connection ends).
    func finish() {
        helper.withLock { helper in
            try? helper?.input.close()
            if let output = helper?.output { close(output) }
            helper = nil
        }
    }

    /// How many operations the helper is given at once at most.
    static let batchSize = 256

    /// One operation to replay: the script the helper's requests are answered from meanwhile, and the names
    /// dropped from the kernel's caches just before (a process may have looked them up since the core applied the
    /// change).
    private struct Step {
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

    /// Replays `changes`, in order (on the notifier's replay queue). `invalidate` drops a name from the kernel's
    /// caches. Consecutive operations that touch different names go to the helper together (one write, then
    /// their answers): a folder's first listing of 10,000 new files no longer waits for a round trip each.
    ///
    /// A burst (at least ``scanThreshold`` changes) is replayed only where a program watches (``InotifyWatches``):
    /// the folder's first listing of 10,000 files nobody watches no longer makes 10,000 operations on the mount
    /// while `ls` waits for the same folder. A watch added after the scan comes with a listing of its own, which
    /// shows what the scan left out.
    func perform(_ changes: [ReplayedChange], invalidate: (UInt64, String) -> Void) {
        var watched: InotifyWatches?
        var scanned = false
        if changes.count >= Self.scanThreshold, let device = device.withLock({ $0 }) {
            watched = InotifyWatches.scan(device: device, othersMayUse: othersMayUse)
            scanned = true
        }
        var batch = Batch()
        var skipped = 0
        for change in changes {
            var steps = steps(for: change, watched: watched)
            if steps.isEmpty, !batch.steps.isEmpty, watched.map({ isWatched(change, $0) }) ?? true {
                // Maybe in a folder an earlier operation of the batch makes (the kernel learns of it then).
                run(batch.steps, invalidate: invalidate)
                batch = Batch()
                steps = self.steps(for: change, watched: watched)
            }
            if steps.isEmpty { skipped += 1 }
            for step in steps {
                if !batch.accepts(step) {
                    run(batch.steps, invalidate: invalidate)
                    batch = Batch()
                }
                batch.add(step)
            }
        }
        run(batch.steps, invalidate: invalidate)
        if scanned {
            let watches = watched.map { "\($0.inodes.count) watched inodes" }
                ?? "any may be: fanotify in use, or processes it cannot look into"
            logger.info(.init(stringLiteral: "replayed \(changes.count - skipped) of \(changes.count) remote changes: "
                + "where a program watches (\(watches))"))
        }
    }

    /// How many changes at once make the replayer look for watches first.
    static let scanThreshold = 64

    /// Whether a watch of `watched` is on a folder or an item `change` touches.
    private func isWatched(_ change: ReplayedChange, _ watched: InotifyWatches) -> Bool {
        let inos: [UInt64] = switch change {
        case .created(let parent, _, _): [parent]
        case .removed(let parent, _, let attributes): [parent, attributes.ino]
        case .moved(let ino, let fromParent, _, let toParent, _): [fromParent, toParent, ino]
        case .changed(let ino, _): [fileSystem.node(ino)?.parent, ino].compactMap { $0 }
        }
        return inos.contains { ino in
            watched.inodes.contains(ino) || (ino == rootIno && watched.inodes.contains(UInt64(FUSE_ROOT_ID)))
        }
    }

    /// The operations that replay `change`, none if nobody can be watching where it happened (or, after a scan,
    /// nobody watches there: `watched`).
    private func steps(for change: ReplayedChange, watched: InotifyWatches?) -> [Step] {
        if let watched, !isWatched(change, watched) { return [] }
        switch change {
        case .created(let parent, let name, let kind):
            guard watchable(parent), let path = path(of: parent, name) else { return [] }
            let operation: ReplayOperation.Kind = switch kind {
            case .directory: .makeDirectory
            case .symlink: .makeSymlink
            default: .makeFile
            }
            var step = Step(operation: ReplayOperation(kind: operation, path: path))
            step.script.absent.insert(.init(parent: parent, name: name))
            step.invalidations = [.init(parent: parent, name: name)]
            return [step]
        case .removed(let parent, let name, let attributes):
            guard watchable(parent, attributes.ino), let path = path(of: parent, name) else { return [] }
            var step = Step(operation: ReplayOperation(
                kind: attributes.kind == .directory ? .removeDirectory : .unlink, path: path))
            step.script.present[.init(parent: parent, name: name)] = current(attributes)
            step.invalidations = [.init(parent: parent, name: name)]
            return [step]
        case .moved(let ino, let fromParent, let fromName, let toParent, let toName):
            guard watchable(fromParent, toParent, ino), let attributes = try? fileSystem.getAttributes(ino),
                  let from = path(of: fromParent, fromName), let to = path(of: toParent, toName) else { return [] }
            var step = Step(operation: ReplayOperation(kind: .rename, path: from, destination: to))
            step.script.present[.init(parent: fromParent, name: fromName)] = attributes
            step.script.absent.insert(.init(parent: toParent, name: toName))
            step.invalidations = [.init(parent: fromParent, name: fromName), .init(parent: toParent, name: toName)]
            return [step]
        case .changed(let ino, let content):
            guard let parent = fileSystem.node(ino)?.parent, watchable(parent, ino),
                  let path = fileSystem.path(of: ino, below: rootIno), !path.isEmpty,
                  let attributes = try? fileSystem.getAttributes(ino) else { return [] }
            // MODIFY for new content, ATTRIB for new attributes: the times, set to what they are.
            var steps = [Step(operation: ReplayOperation(
                kind: content ? .setModificationTime : .setTimes, path: path,
                seconds: attributes.modificationTime.seconds, nanoseconds: attributes.modificationTime.nanoseconds))]
            // OPEN and CLOSE_WRITE, which editors and file managers take as "saved" (after the first: one path
            // per batch).
            if content, attributes.kind == .file {
                steps.append(Step(operation: ReplayOperation(kind: .openForWriting, path: path)))
            }
            return steps
        }
    }

    /// Drops the batch's names from the kernel's caches and has the helper make its operations. A name looked up
    /// again by another process between its drop and its operation is in the kernel's cache once more (a create
    /// then fails with `EEXIST`, a remove or move with `ENOENT`, firing nothing): such an operation is made once
    /// more alone, its names dropped right before it, as a single change always was.
    private func run(_ steps: [Step], invalidate: (UInt64, String) -> Void) {
        guard !steps.isEmpty else { return }
        var script = ReplayScript()
        for step in steps {
            script.absent.formUnion(step.script.absent)
            script.present.merge(step.script.present) { first, _ in first }
            for name in step.invalidations { invalidate(name.parent, name.name) }
        }
        let answers = send(steps.map(\.operation), script)
        guard steps.count > 1 else { return }
        for (step, answer) in zip(steps, answers) where Self.raced(answer) {
            // Alone, the window is one operation wide; a reader walking the folder can still hit it, so a few times.
            for _ in 0..<Self.attemptsAlone {
                for name in step.invalidations { invalidate(name.parent, name.name) }
                guard Self.raced(send([step.operation], step.script).first ?? nil) else { break }
            }
        }
    }

    /// How many times an operation that raced with a lookup in its batch is made again alone at most.
    static let attemptsAlone = 3

    /// Whether an answer says the kernel had the name cached again (looked up by another process meanwhile).
    private static func raced(_ answer: Int32?) -> Bool {
        answer == EEXIST || answer == ENOENT
    }

    /// Whether a program can be watching one of `inos`: an inode the kernel never looked up (a folder nobody
    /// opened) has no watch, so a change there is not replayed (a remote tree copied into an unvisited folder
    /// costs nothing).
    private func watchable(_ inos: UInt64...) -> Bool {
        inos.contains { $0 == rootIno || fileSystem.isKnownToKernel($0) }
    }

    /// The path of `name` in `parent` relative to the mount's root, or `nil` if `parent` is not in its view.
    private func path(of parent: UInt64, _ name: String) -> String? {
        guard let relative = fileSystem.path(of: parent, below: rootIno) else { return nil }
        return relative.isEmpty ? name : "\(relative)/\(name)"
    }

    /// The item's attributes now, if the core still has it (an open file outlives its delete).
    private func current(_ attributes: Attributes) -> Attributes {
        (try? fileSystem.getAttributes(attributes.ino)) ?? attributes
    }

    /// Has the helper make `operations`, in order, with `script` in force for its requests, and waits (bounded,
    /// per answer) for their answers: 0 or an errno each, `nil` for those it did not answer.
    private func send(_ operations: [ReplayOperation], _ script: ReplayScript) -> [Int32?] {
        var answers = [Int32?](repeating: nil, count: operations.count)
        guard !stopping.load(ordering: .sequentiallyConsistent) else { return answers }
        let encoder = JSONEncoder()
        var lines: [UInt8] = []
        for operation in operations {
            guard let line = try? encoder.encode(operation) else { return answers }
            lines += line
            lines.append(UInt8(ascii: "\n"))
        }
        running.withLock { $0.script = script }
        defer { running.withLock { $0.script = ReplayScript() } }
        helper.withLock { helper in
            // A helper that went away (killed by someone) is replaced once, for these very operations.
            var attempts = 0
            var written: Helper?
            while written == nil && attempts < 2 {
                attempts += 1
                if helper == nil { helper = startHelper() }
                guard let current = helper else { return }
                do {
                    try current.input.write(contentsOf: lines)
                    written = current
                } catch {
                    logger.warning("the replay helper is gone (\(error)); starting another")
                    stopHelper(&helper)
                }
            }
            guard var current = written else { return }
            for (index, operation) in operations.enumerated() {
                guard let answer = readLine(&current) else {
                    if !stopping.load(ordering: .sequentiallyConsistent) {
                        logger.warning("the replay helper did not answer a \(operation.kind) within 10 s; it is replaced")
                    }
                    stopHelper(&helper)
                    return
                }
                let code = Int32(answer)
                answers[index] = code ?? EIO
                if answer != "0" {
                    let reason = code.map { String(cString: strerror($0)) } ?? answer
                    logger.debug("replaying \(operation.kind) of \(operation.path) on the mount failed: \(reason)")
                }
            }
            helper = current
        }
        return answers
    }

    private func startHelper() -> Helper? {
        guard let executable = helperCommand.first, let device = device.withLock({ $0 }) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(helperCommand.dropFirst()) + [mountpoint, device]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.terminationHandler = { [weak self] ended in self?.forget(ended.processIdentifier) }
        do {
            try running.withLock { running in
                try process.run()
                running.helpers.insert(process.processIdentifier)
            }
        } catch {
            logger.warning("cannot start the replay helper \(executable): \(error)")
            return nil
        }
        let outputFD = dup(output.fileHandleForReading.fileDescriptor)
        try? output.fileHandleForReading.close()
        try? input.fileHandleForReading.close()
        try? output.fileHandleForWriting.close()
        return Helper(process: process, input: input.fileHandleForWriting, output: outputFD)
    }

    /// A helper has exited and been reaped.
    private func forget(_ pid: Int32) {
        _ = running.withLock { $0.helpers.remove(pid) }
    }

    private func stopHelper(_ helper: inout Helper?) {
        guard let current = helper else { return }
        if current.process.isRunning { kill(current.process.processIdentifier, SIGKILL) }
        try? current.input.close()
        close(current.output)
        helper = nil
    }

    /// One line from the helper, waiting at most ``answerTimeout`` ms in all, and not after ``stop()``.
    private func readLine(_ helper: inout Helper) -> String? {
        let deadline = ContinuousClock.now + .milliseconds(Int(Self.answerTimeout))
        while true {
            if let end = helper.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: helper.buffer[..<end], as: UTF8.self)
                helper.buffer.removeSubrange(...end)
                return line
            }
            let left = deadline - .now
            guard left > .zero, !stopping.load(ordering: .sequentiallyConsistent) else { return nil }
            var poller = pollfd(fd: helper.output, events: Int16(POLLIN), revents: 0)
            let waited = poll(&poller, 1, Int32(min(100, (left / .milliseconds(1)).rounded(.up))))
            if waited < 0 && errno == EINTR || waited == 0 { continue }
            guard waited > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(helper.output, &chunk, chunk.count)
            guard count > 0 else { return nil }
            helper.buffer.append(contentsOf: chunk[..<count])
        }
    }
}
