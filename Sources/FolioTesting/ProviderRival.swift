import FolioCore
import Foundation
import Glibc

/// A provider in another process over the same remote, for the conformance suite's race across processes (two
/// processes are two devices): the suite sends it a ``RivalCommand`` and runs the same kind of operation itself
/// at the same instant.
///
/// The other process is any executable that runs ``serve(provider:)`` with its own provider over the remote
/// (a provider's test bundle runs itself again with one test selected): commands arrive on its standard input,
/// one JSON line each, and each answer is a line on its standard output that starts with ``marker`` (other
/// output, such as the test runner's, is ignored).
public final class ProviderRival: @unchecked Sendable {
    /// What starts an answer line.
    public static let marker = "FOLIO-RIVAL "

    /// The process.
    private let process: Process
    /// Its standard input.
    private let input: FileHandle
    /// Its standard output, read by ``LineReader``.
    private let output: LineReader

    /// Starts `executable` with `arguments` and `environment` added to this process's environment.
    public init(executable: String, arguments: [String], environment: [String: String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let inputPipe = Pipe()
        let outputPipe = Pipe()
        process.standardInput = inputPipe
        process.standardOutput = outputPipe
        try process.run()
        input = inputPipe.fileHandleForWriting
        output = LineReader(outputPipe.fileHandleForReading.fileDescriptor)
    }

    deinit {
        stop()
    }

    /// Sends a command; its answer comes from ``answer(timeout:)``.
    public func send(_ command: RivalCommand) throws {
        var line = try JSONEncoder().encode(command)
        line.append(UInt8(ascii: "\n"))
        try input.write(contentsOf: line)
    }

    /// The answer to the last command sent, waiting at most `timeout` seconds (on a thread of its own).
    public func answer(timeout: Double = 60) async throws -> RivalAnswer {
        let output = self.output
        let line: String = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try output.line(containing: Self.marker, timeout: timeout) })
            }
        }
        guard let start = line.range(of: Self.marker),
            let answer = try? JSONDecoder().decode(RivalAnswer.self, from: Data(line[start.upperBound...].utf8))
        else {
            throw ConformanceFailure(check: "rival", message: "the rival process answered \(line)")
        }
        return answer
    }

    /// Ends the process (closing its input ends ``serve(provider:)``; it is killed if it does not end).
    public func stop() {
        try? input.close()
        guard process.isRunning else { return }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The rival's side: runs each command read from standard input on `provider`, answering on standard
    /// output, until the input ends.
    public static func serve(provider: any Provider) async {
        while let line = readLine() {
            guard let command = try? JSONDecoder().decode(RivalCommand.self, from: Data(line.utf8)) else {
                write(RivalAnswer(outcome: .failed, version: nil, message: "not a command: \(line)"))
                continue
            }
            write(await command.run(on: provider))
        }
    }

    /// Writes one answer line with a single `write(2)`, so no other output splits it.
    private static func write(_ answer: RivalAnswer) {
        let json = (try? JSONEncoder().encode(answer)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
        let bytes = Array((marker + json + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { return }
            written += result
        }
    }
}

/// Reads lines from a descriptor with `poll` and `read`, with a time limit.
private final class LineReader: @unchecked Sendable {
    /// The descriptor.
    private let descriptor: Int32
    /// Bytes read but not yet returned.
    private var buffer: [UInt8] = []
    /// One reader at a time.
    private let lock = NSLock()

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line containing `marker` (lines without it are skipped); fails at end of input or after
    /// `timeout` seconds.
    func line(containing marker: String, timeout: Double) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                if line.contains(marker) { return line }
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw ConformanceFailure(check: "rival", message: "no answer from the rival process in \(timeout) s")
            }
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Int32(min(remaining, 1) * 1000))
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw ConformanceFailure(check: "rival", message: "the rival process ended without answering")
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}
