import Foundation
import Glibc
import Logging
import SystemPackage
import Synchronization

/// The daemon's end of the replay helper (``ReplayHelper``): the process is started when first needed, handed
/// operations as JSON lines and its answers read back with a time limit; a helper that went away or stopped
/// answering is replaced for the next operations.
final class ReplayHelperLink: Sendable {
    private struct Helper: @unchecked Sendable {
        var process: Process
        var input: FileHandle
        var output: Int32
        var buffer: [UInt8] = []
    }

    /// How long one operation may take before the helper is given up (and replaced for the next change).
    private static let answerTimeout: Duration = .seconds(10)

    /// The helper processes alive (requests from them are never passed to the core); a helper leaves the set once
    /// it has exited and been reaped, so its process id, free again, means nothing here.
    private let alive = Mutex<Set<Int32>>([])
    private let stopping = Atomic(false)
    /// Used from the replay's queue.
    private let helper = Mutex<Helper?>(nil)
    private let command: [String]
    private let mountpoint: String
    private let logger: Logger

    /// A link to helpers started with `command` plus the mountpoint and the mount's device.
    init(command: [String], mountpoint: String, logger: Logger) {
        self.command = command
        self.mountpoint = mountpoint
        self.logger = logger
    }

    /// Whether process `pid` is one of the helpers.
    func isHelper(_ pid: Int32) -> Bool {
        alive.withLock { $0.contains(pid) }
    }

    /// Sends no more operations and stops waiting for answers (the mount is going away: its loop may have dropped
    /// the helper's request). From any thread.
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
    }

    /// Whether ``stop()`` was called.
    var isStopping: Bool { stopping.load(ordering: .sequentiallyConsistent) }

    /// Ends the helper (on the replay's queue, after ``stop()``): it exits when its input closes (a helper still
    /// waiting in a request to the mount, when the connection ends).
    func finish() {
        helper.withLock { helper in
            try? helper?.input.close()
            if let output = helper?.output { close(output) }
            helper = nil
        }
    }

    /// Has the helper for the mount on `device` make `operations`, in order, and waits (bounded, per answer) for
    /// their answers (on the replay's queue).
    func send(_ operations: [ReplayOperation], device: String) -> [ReplayAnswer] {
        var answers = [ReplayAnswer](repeating: .none, count: operations.count)
        guard !isStopping else { return answers }
        let encoder = JSONEncoder()
        var lines: [UInt8] = []
        for operation in operations {
            guard let line = try? encoder.encode(operation) else { return answers }
            lines += line
            lines.append(UInt8(ascii: "\n"))
        }
        helper.withLock { helper in
            guard var current = write(lines, to: &helper, device: device) else { return }
            for (index, operation) in operations.enumerated() {
                guard let line = readLine(&current) else {
                    if !isStopping {
                        logger.warning(
                            "the replay helper did not answer a \(operation.kind) within 10 s; it is replaced")
                    }
                    stopHelper(&helper)
                    return
                }
                answers[index] = ReplayAnswer(line: line)
                if case .failed(let error) = answers[index] {
                    logger.debug("replaying \(operation.kind) of \(operation.path) on the mount failed: \(error)")
                }
            }
            helper = current
        }
        return answers
    }

    /// Writes `lines` to the helper, starting one if there is none; a helper that went away (killed by someone)
    /// is replaced once, for these very lines. The helper written to, or `nil`.
    private func write(_ lines: [UInt8], to helper: inout Helper?, device: String) -> Helper? {
        for _ in 0..<2 {
            if helper == nil { helper = startHelper(device: device) }
            guard let current = helper else { return nil }
            do {
                try current.input.write(contentsOf: lines)
                return current
            } catch {
                logger.warning("the replay helper is gone (\(error)); starting another")
                stopHelper(&helper)
            }
        }
        return nil
    }

    private func startHelper(device: String) -> Helper? {
        guard let executable = command.first else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(command.dropFirst()) + [mountpoint, device]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.terminationHandler = { [weak self] ended in self?.forget(ended.processIdentifier) }
        do {
            try alive.withLock { alive in
                try process.run()
                alive.insert(process.processIdentifier)
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
        _ = alive.withLock { $0.remove(pid) }
    }

    private func stopHelper(_ helper: inout Helper?) {
        guard let current = helper else { return }
        if current.process.isRunning { kill(current.process.processIdentifier, SIGKILL) }
        try? current.input.close()
        close(current.output)
        helper = nil
    }

    /// One line from the helper, waiting at most ``answerTimeout`` in all, and not after ``stop()``.
    private func readLine(_ helper: inout Helper) -> String? {
        let deadline = ContinuousClock.now + Self.answerTimeout
        while true {
            if let end = helper.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: helper.buffer[..<end], as: UTF8.self)
                helper.buffer.removeSubrange(...end)
                return line
            }
            let left = deadline - .now
            guard left > .zero, !isStopping else { return nil }
            var poller = pollfd(fd: helper.output, events: Int16(POLLIN), revents: 0)
            let waited = poll(&poller, 1, Int32(min(100, (left / .milliseconds(1)).rounded(.up))))
            if waited < 0 && Errno(rawValue: errno) == .interrupted || waited == 0 { continue }
            guard waited > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(helper.output, &chunk, chunk.count)
            guard count > 0 else { return nil }
            helper.buffer.append(contentsOf: chunk[..<count])
        }
    }
}
