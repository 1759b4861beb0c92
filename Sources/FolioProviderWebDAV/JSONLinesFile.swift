import Foundation
import Synchronization

/// A file of JSON values, one per line, kept private (0600): appended to as something changes, read whole and
/// rewritten compact when loaded. A torn last line (a crash while appending) is skipped when read.
final class JSONLinesFile<Line: Codable>: Sendable {
    let url: URL
    private let handle = Mutex<FileHandle?>(nil)

    init(_ url: URL) {
        self.url = url
    }

    /// Every line that reads as a `Line`, in order.
    func read() -> [Line] {
        guard let data = try? Data(contentsOf: url) else { return [] }
        let decoder = JSONDecoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Line.self, from: $0) }
    }

    /// Appends `lines`.
    func append(_ lines: [Line]) {
        guard !lines.isEmpty else { return }
        let data = Self.encode(lines)
        handle.withLock { handle in
            if handle == nil {
                if !FileManager.default.fileExists(atPath: url.path) {
                    _ = FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
                }
                handle = try? FileHandle(forWritingTo: url)
                _ = try? handle?.seekToEnd()
            }
            try? handle?.write(contentsOf: data)
        }
    }

    /// Replaces the file with `lines` (written aside, then renamed over it).
    func rewrite(_ lines: [Line]) {
        let aside = url.appendingPathExtension("new")
        guard FileManager.default.createFile(
            atPath: aside.path, contents: Self.encode(lines), attributes: [.posixPermissions: 0o600])
        else { return }
        handle.withLock { handle in
            try? handle?.close()
            handle = nil
            _ = rename(aside.path, url.path)
        }
    }

    private static func encode(_ lines: [Line]) -> Data {
        if let writable = lines as? [any JSONLineWritable] {
            var writer = JSONLineWriter()
            for line in writable {
                line.write(to: &writer)
                writer.newline()
            }
            return Data(writer.bytes)
        }
        let encoder = JSONEncoder()
        var data = Data()
        for line in lines {
            guard let encoded = try? encoder.encode(line) else { continue }
            data.append(encoded)
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}
