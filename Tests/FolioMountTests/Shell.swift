import Foundation
import XCTest

/// The result of a finished command.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs real processes for the mount tests, always with a time limit.
enum Shell {
    /// Runs `bash -c script`, killing it after `timeout` seconds.
    @discardableResult
    static func run(
        _ script: String, timeout: TimeInterval = 120, environment: [String: String] = [:],
        file: StaticString = #filePath, line: UInt = #line
    ) -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let outData = LockedData()
        let errData = LockedData()
        let ends = DispatchSemaphore(value: 0)
        do {
            try process.run()
        } catch {
            XCTFail("cannot run \(script): \(error)", file: file, line: line)
            return CommandResult(status: -1, stdout: "", stderr: "")
        }
        // Each pipe is read to its end on a thread of its own, by blocking reads (a `readabilityHandler` sometimes
        // heard of the end seconds late, which made a command's output arrive late and stale).
        for (pipe, data) in [(out, outData), (err, errData)] {
            let handle = SendableHandle(pipe.fileHandleForReading)  // kept open while the thread reads
            Thread.detachNewThread {
                let descriptor = handle.handle.fileDescriptor
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count > 0 {
                        data.append(Data(buffer[0..<count]))
                    } else if count < 0 && errno == EINTR {
                        continue
                    } else {
                        break
                    }
                }
                ends.signal()
            }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(-process.processIdentifier, SIGKILL)
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            XCTFail("timed out after \(timeout) s: \(script)", file: file, line: line)
        }
        process.waitUntilExit()
        // Both pipes reach end of file unless a background grandchild still holds them: wait a little, not forever.
        for _ in 0..<2 { _ = ends.wait(timeout: .now() + 2) }
        return CommandResult(status: process.terminationStatus, stdout: outData.string, stderr: errData.string)
    }

    /// Runs a command that must succeed; returns its standard output.
    @discardableResult
    static func check(
        _ script: String, timeout: TimeInterval = 120, file: StaticString = #filePath, line: UInt = #line
    ) -> String {
        let result = run(script, timeout: timeout, file: file, line: line)
        XCTAssertEqual(
            result.status, 0, "command failed: \(script)\nstdout: \(result.stdout)\nstderr: \(result.stderr)",
            file: file, line: line)
        return result.stdout
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
    @discardableResult
    static func waitUntil(timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}

/// Reads extended attributes in this process (Glibc's Swift module does not export `<sys/xattr.h>`).
enum ExtendedAttributes {
    private typealias GetAttribute = @convention(c) (
        UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int
    ) -> Int
    private static let lgetxattr: GetAttribute = unsafeBitCast(
        dlsym(dlopen(nil, RTLD_NOW), "lgetxattr"), to: GetAttribute.self)

    /// The value of `name` on `path` itself, or `nil` when it cannot be read.
    static func value(_ name: String, of path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let count = lgetxattr(path, name, &buffer, buffer.count)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}

/// A file handle handed to the thread that reads it.
struct SendableHandle: @unchecked Sendable {
    let handle: FileHandle
    init(_ handle: FileHandle) { self.handle = handle }
}

/// Bytes collected from a pipe on another thread.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func append(_ more: Data) {
        lock.lock()
        data.append(more)
        lock.unlock()
    }

    var string: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}
