import Foundation

extension ApacheServer {
    /// One request of the server's access log, as the request's headers and the answer's status say.
    public struct AccessLogEntry: Equatable, Sendable {
        /// The `LogFormat` of the log: tab-separated fields, `-` for a header the request did not send. The last two
        /// (the `If` header, the time the request came, in microseconds) are for reading the log by hand.
        static let format =
            #"%m\t%U\t%>s\t%{Range}i\t%{If-Match}i\t%{If-None-Match}i\t%{Content-Length}i\t%{Destination}i"#
            + #"\t%{If}i\t%{usec}t"#

        /// The method (`PUT`).
        public var method: String
        /// The URL path, decoded (`/folio/com.folio.drive/a.txt`).
        public var path: String
        /// The status of the answer.
        public var status: Int
        /// The request's `Range` header (`bytes=0-99`), if sent.
        public var range: String?
        /// The request's `If-Match` header, if sent.
        public var ifMatch: String?
        /// The request's `If-None-Match` header, if sent.
        public var ifNoneMatch: String?
        /// The request's `Content-Length` header, if sent.
        public var contentLength: Int64?
        /// The path of the request's `Destination` header (`MOVE`, `COPY`), decoded, if sent.
        public var destination: String?

        /// Whether the answer was a success (2xx).
        public var succeeded: Bool { (200..<300).contains(status) }

        /// The first byte a `Range: bytes=A-…` asks for, if the request asked for one range.
        public var rangeStart: Int64? {
            guard let range, range.hasPrefix("bytes="), let dash = range.firstIndex(of: "-") else { return nil }
            return Int64(range[range.index(range.startIndex, offsetBy: 6)..<dash])
        }

        /// Reads one line of the log, or `nil` for a line of another shape.
        init?(line: Substring) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map { field -> String? in
                // Apache escapes quotes and backslashes in header values.
                field == "-" ? nil : field.replacingOccurrences(of: #"\""#, with: "\"")
                    .replacingOccurrences(of: #"\\"#, with: "\\")
            }
            guard fields.count >= 8, let method = fields[0], let path = fields[1], let status = fields[2].flatMap({
                Int($0)
            }) else { return nil }
            self.method = method
            self.path = path
            self.status = status
            range = fields[3]
            ifMatch = fields[4]
            ifNoneMatch = fields[5]
            contentLength = fields[6].flatMap { Int64($0) }
            destination = fields[7].flatMap { URL(string: $0)?.path(percentEncoded: false) }
        }
    }

    /// ``accessLog()`` once the requests answered before the call are in it. Apache writes a request's line after
    /// its answer is sent, so a client can hold the answer before the line exists. A request made now is logged
    /// after those: its line is waited for (at most 10 s).
    public func settledAccessLog() -> [AccessLogEntry] {
        let sentinel = "/log-sentinel-\(UUID().uuidString)"
        _ = try? request("GET", sentinel)
        let deadline = Date().addingTimeInterval(10)
        var log = accessLog()
        while !log.contains(where: { $0.path == sentinel }) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            log = accessLog()
        }
        return log
    }

    /// The requests the server answered so far, oldest first (its own readiness probes included); a line still
    /// being written is left out.
    public func accessLog() -> [AccessLogEntry] {
        let text = (try? String(contentsOfFile: accessLogPath, encoding: .utf8)) ?? ""
        let complete = text.hasSuffix("\n") ? Substring(text) : text[..<(text.lastIndex(of: "\n") ?? text.startIndex)]
        return complete.split(separator: "\n").compactMap { AccessLogEntry(line: $0) }
    }
}
