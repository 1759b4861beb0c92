import Foundation

/// One HTTP request made with the `curl` program, as the WebDAV test servers use it to talk to themselves: an
/// independent client, so what the tests record about a server is what the server sends, not what Folio's own
/// client makes of it. Every request is bounded (`--max-time`).
public struct Curl {
    /// The reply to a request.
    public struct Reply {
        /// The HTTP status code (0 when no reply came: see ``exitCode``).
        public var status: Int
        /// The reply's headers, names in lower case (the last one of a name wins).
        public var headers: [String: String]
        /// The reply's body.
        public var body: Data
        /// curl's exit status: 0 when a reply came, 60 when the server's certificate was not trusted, …
        public var exitCode: Int32

        /// The body as text, for messages.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// A user and password sent with Basic authentication.
    public struct Credentials {
        /// The user name.
        public var user: String
        /// The password.
        public var password: String

        /// Credentials of `user` with `password`.
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    /// A folder for the temporary files of a request (reply body, headers, request body).
    public var scratch: String
    /// Sent with every request when set.
    public var credentials: Credentials?
    /// A PEM file of the certificate authority to trust for `https`, when set.
    public var caFile: String?
    /// The longest a request may take, in seconds.
    public var maxTime = 30

    /// A client keeping its temporary files in `scratch`, without credentials or certificate authority.
    public init(scratch: String) {
        self.scratch = scratch
    }

    /// Makes a request of `url` with `method`, extra `headers` (`"Name: value"`) and an optional body.
    public func request(_ method: String, _ url: String, headers: [String] = [], body: Data? = nil) throws -> Reply {
        let tag = UUID().uuidString.prefix(8)
        let output = scratch + "/reply-\(tag)"
        let headerFile = scratch + "/headers-\(tag)"
        let bodyFile = scratch + "/body-\(tag)"
        defer {
            for file in [output, headerFile, bodyFile] { try? FileManager.default.removeItem(atPath: file) }
        }
        var arguments = ["-s", "-o", output, "-D", headerFile, "-w", "%{http_code}", "--max-time", "\(maxTime)",
            "-X", method]
        if let body {
            try body.write(to: URL(fileURLWithPath: bodyFile))
            arguments += ["--data-binary", "@" + bodyFile]
        }
        // Credentials go through a config read from standard input, so the password is never in `ps`.
        if credentials != nil { arguments += ["-K", "-"] }
        if let caFile { arguments += ["--cacert", caFile] }
        arguments += headers.flatMap { ["-H", $0] } + ["--", url]
        let (exitCode, code) = try Self.run(arguments, input: credentials.map(Self.configuration))
        let body = (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data()
        let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        return Reply(
            status: Int(code) ?? 0, headers: Self.headers(headerText), body: body, exitCode: exitCode)
    }

    /// A curl config line giving `credentials`, quoted as curl's config syntax wants.
    private static func configuration(_ credentials: Credentials) -> String {
        let value = (credentials.user + ":" + credentials.password)
            .replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "user = \"\(value)\"\n"
    }

    /// The headers of the last reply in a `-D` dump (interim `100 Continue` replies come first).
    private static func headers(_ dump: String) -> [String: String] {
        var headers: [String: String] = [:]
        for line in dump.components(separatedBy: "\r\n") {
            if line.hasPrefix("HTTP/") {
                headers = [:]
            } else if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return headers
    }

    /// Runs curl with `arguments`, writing `input` to its standard input; its exit status and standard output.
    private static func run(_ arguments: [String], input: String?) throws -> (Int32, String) {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = arguments
        let output = Pipe()
        curl.standardOutput = output
        curl.standardError = FileHandle.nullDevice
        let stdin = Pipe()
        curl.standardInput = stdin
        try curl.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        return (curl.terminationStatus, String(decoding: text, as: UTF8.self))
    }
}
