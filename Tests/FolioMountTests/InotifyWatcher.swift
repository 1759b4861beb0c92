import Foundation
import XCTest

/// `inotifywait -m` on a real path, for tests that check what programs watching a mount see. Its events are
/// read from a file, one `EVENTS path` line each (paths relative to `base`).
final class InotifyWatcher {
    private let process = Process()
    private let eventsPath: String
    private let base: String

    /// Starts watching (`inotifywait -m ARGUMENTS`, output in `directory`) and waits until the watches are in
    /// place. Call ``stop()`` at teardown.
    init(_ arguments: [String], base: String, directory: String) throws {
        self.base = base
        eventsPath = directory + "/events-\(UUID().uuidString.prefix(8))"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/inotifywait")
        process.arguments = ["-m"] + arguments
        _ = FileManager.default.createFile(atPath: eventsPath, contents: nil)
        _ = FileManager.default.createFile(atPath: eventsPath + ".err", contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: eventsPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: eventsPath + ".err"))
        try process.run()
        let ready = Shell.waitUntil(timeout: 15) {
            let messages = (try? String(contentsOfFile: self.eventsPath + ".err", encoding: .utf8)) ?? ""
            return messages.contains("Watches established")
        }
        if !ready { stop() }
        XCTAssertTrue(ready, "inotifywait did not start")
    }

    /// Watches a whole tree, as a file manager would: `EVENTS relative/path` lines.
    convenience init(tree: String, directory: String) throws {
        try self.init(["-r", "--format", "%e %w%f", tree], base: tree, directory: directory)
    }

    /// Ends `inotifywait`.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// The events seen so far.
    var events: [String] {
        let text = (try? String(contentsOfFile: eventsPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { $0.replacingOccurrences(of: base + "/", with: "") }
    }

    /// Waits (bounded) for an event `matches` accepts; fails the test with the events seen if none comes.
    func expect(
        _ what: String, file: StaticString = #filePath, line: UInt = #line, _ matches: @escaping (String) -> Bool
    ) {
        let seen = Shell.waitUntil(timeout: 15) { self.events.contains(where: matches) }
        XCTAssertTrue(seen, "\(what): events so far:\n\(events.joined(separator: "\n"))", file: file, line: line)
    }

    /// Waits (bounded) for the event line `wanted`.
    func expect(_ wanted: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        expect(what, file: file, line: line) { $0 == wanted }
    }
}
