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
    private let logger: Logger
    /// The mount's device (`major:minor`), known once mounted.
    private let device = Mutex<String?>(nil)

    init(fileSystem: FolioFileSystem, mountpoint: String, rootIno: UInt64, helperCommand: [String], logger: Logger) {
        self.fileSystem = fileSystem
        self.mountpoint = mountpoint
        self.rootIno = rootIno
        self.helperCommand = helperCommand
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

    /// Replays `change` (on the notifier's replay queue). `invalidate` drops a name from the kernel's caches first (a
    /// process may have looked it up since the core applied the change).
    func perform(_ change: ReplayedChange, invalidate: (UInt64, String) -> Void) {
        var script = ReplayScript()
        switch change {
        case .created(let parent, let name, let kind):
            guard watchable(parent), let path = path(of: parent, name) else { return }
            script.absent.insert(.init(parent: parent, name: name))
            invalidate(parent, name)
            let operation: ReplayOperation.Kind = switch kind {
            case .directory: .makeDirectory
            case .symlink: .makeSymlink
            default: .makeFile
            }
            send(ReplayOperation(kind: operation, path: path), script)
        case .removed(let parent, let name, let attributes):
            guard watchable(parent, attributes.ino), let path = path(of: parent, name) else { return }
            script.present[.init(parent: parent, name: name)] = current(attributes)
            invalidate(parent, name)
            send(ReplayOperation(kind: attributes.kind == .directory ? .removeDirectory : .unlink, path: path), script)
        case .moved(let ino, let fromParent, let fromName, let toParent, let toName):
            guard watchable(fromParent, toParent, ino), let attributes = try? fileSystem.getAttributes(ino),
                  let from = path(of: fromParent, fromName), let to = path(of: toParent, toName) else { return }
            script.present[.init(parent: fromParent, name: fromName)] = attributes
            script.absent.insert(.init(parent: toParent, name: toName))
            invalidate(fromParent, fromName)
            invalidate(toParent, toName)
            send(ReplayOperation(kind: .rename, path: from, destination: to), script)
        case .changed(let ino, let content):
            guard let parent = fileSystem.node(ino)?.parent, watchable(parent, ino),
                  let path = fileSystem.path(of: ino, below: rootIno), !path.isEmpty,
                  let attributes = try? fileSystem.getAttributes(ino) else { return }
            // MODIFY for new content, ATTRIB for new attributes: the times, set to what they are.
            send(ReplayOperation(
                kind: content ? .setModificationTime : .setTimes, path: path,
                seconds: attributes.modificationTime.seconds, nanoseconds: attributes.modificationTime.nanoseconds),
                script)
            // OPEN and CLOSE_WRITE, which editors and file managers take as "saved".
            if content, attributes.kind == .file { send(ReplayOperation(kind: .openForWriting, path: path), script) }
        }
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

    /// Has the helper make `operation` with `script` in force for its requests, and waits (bounded) for it.
    private func send(_ operation: ReplayOperation, _ script: ReplayScript) {
        guard !stopping.load(ordering: .sequentiallyConsistent),
              let line = try? JSONEncoder().encode(operation) else { return }
        running.withLock { $0.script = script }
        defer { running.withLock { $0.script = ReplayScript() } }
        helper.withLock { helper in
            // A helper that went away (killed by someone) is replaced once, for this very operation.
            var attempts = 0
            var written: Helper?
            while written == nil && attempts < 2 {
                attempts += 1
                if helper == nil { helper = startHelper() }
                guard let current = helper else { return }
                do {
                    try current.input.write(contentsOf: line + [UInt8(ascii: "\n")])
                    written = current
                } catch {
                    logger.warning("the replay helper is gone (\(error)); starting another")
                    stopHelper(&helper)
                }
            }
            guard var current = written else { return }
            guard let answer = readLine(&current) else {
                if !stopping.load(ordering: .sequentiallyConsistent) {
                    logger.warning("the replay helper did not answer a \(operation.kind) within 10 s; it is replaced")
                }
                stopHelper(&helper)
                return
            }
            helper = current
            if answer != "0" {
                let reason = Int32(answer).map { String(cString: strerror($0)) } ?? answer
                logger.debug("replaying \(operation.kind) of \(operation.path) on the mount failed: \(reason)")
            }
        }
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
            var chunk = [UInt8](repeating: 0, count: 256)
            let count = read(helper.output, &chunk, chunk.count)
            guard count > 0 else { return nil }
            helper.buffer.append(contentsOf: chunk[..<count])
        }
    }
}
