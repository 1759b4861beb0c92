import Foundation

/// The command-line tools the test servers need to set themselves up (`htpasswd`, `openssl`, `mount`), run to
/// their end.
public enum Tool {
    /// A tool ended with a non-zero status.
    public struct Failed: Error, CustomStringConvertible {
        /// The tool, its first argument and its output.
        public let description: String
    }

    /// Runs `tool` with `arguments` and `input` on its standard input; throws with its output when it fails.
    public static func run(_ tool: String, _ arguments: [String], input: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failed(description: "\(tool) \(arguments.first ?? ""): " + String(decoding: text, as: UTF8.self))
        }
    }

    /// Writes an htpasswd file at `path` holding one bcrypt entry for `user` (the password goes through standard
    /// input, never the command line), readable by the server's unprivileged children.
    public static func htpasswd(_ path: String, user: String, password: String) throws {
        try run("/usr/bin/htpasswd", ["-ciB", path, user], input: password)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
    }
}
