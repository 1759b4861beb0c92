import AsyncHTTPClient
import FolioCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SystemPackage

/// A server's answer: its status, headers and, for requests whose body is read, the body.
public struct WebDAVResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The headers, by lowercased name (a header sent more than once: its values joined with `, `).
    public var headers: [String: String]
    /// The body, if it was read.
    public var body: Data

    /// The header `name` (any case), if sent.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// HTTP for the WebDAV provider, on async-http-client (pooled keep-alive connections, TLS, streamed bodies,
/// timeouts). Redirects are never followed (a redirect to another host could hand it the password). A request
/// the server refused without acting on it (503, 429, a connection that could not be made), and a read-only
/// request that failed on the way or with a 500, 502 or 504, are tried again within the call
/// (``WebDAVConfiguration/attempts`` times, with a growing, jittered wait, honouring `Retry-After`); what is left
/// is a ``FolioError`` the caller's own retries handle: `.offline` for a server that cannot be reached.
public final class WebDAVClient: Sendable {
    /// The settings the client was made with.
    public let configuration: WebDAVConfiguration
    private let http: HTTPClient
    private let authorization: String?
    /// The event loop downloads run on (see ``download(_:headers:range:to:accept:progress:)``).
    private let downloadLoop: any EventLoop

    /// Makes a client; `configuration.caFile` must be a readable PEM file.
    public init(configuration: WebDAVConfiguration) throws(FolioError) {
        self.configuration = configuration
        var tls: TLSConfiguration?
        if let caFile = configuration.caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw .invalidArgument("--ca-file \(caFile) cannot be read")
            }
            var settings = TLSConfiguration.makeClientConfiguration()
            settings.trustRoots = .file(caFile)
            tls = settings
        }
        var settings = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: Self.timeAmount(configuration.requestTimeout)))
        // A connection that cannot be made fails the request at once, and ``withRetries(_:_:)`` tries again with
        // its own backoff: left to the pool, each attempt would wait out the whole connect time-out, and a server
        // that is down would take half a minute to be found offline.
        settings.connectionPool.retryConnectionEstablishment = false
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
        downloadLoop = http.eventLoopGroup.next()
        if let user = configuration.user {
            authorization = "Basic " + Data("\(user):\(configuration.password ?? "")".utf8).base64EncodedString()
        } else {
            authorization = nil
        }
    }

    /// Closes the connections; no request may follow.
    public func shutdown() async {
        try? await http.shutdown()
    }

    deinit {
        // A client dropped without ``shutdown()`` still closes its connections (the task keeps it alive till then).
        let http = self.http
        Task { try? await http.shutdown() }
    }

    /// What a request sends as its body.
    enum Body: Sendable {
        case none
        case bytes(Data)
        /// The whole of a file, streamed from disk, never held in memory.
        case file(FilePath)
    }

    /// Sends `method` to `path` (an encoded absolute path) and reads at most `limit` bytes of the answer's body
    /// (a longer body is a clear error), all within ``WebDAVConfiguration/requestTimeout``. Any status comes back;
    /// only transport failures throw.
    func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: Body = .none,
        limit: Int = 1 << 20
    ) async throws(FolioError) -> WebDAVResponse {
        try await withRetries(method) { () async throws -> WebDAVResponse in
            let deadline = ContinuousClock.now + self.configuration.requestTimeout
            let response = try await self.execute(method, path, headers: headers, body: body)
            var collected: ByteBuffer
            do {
                collected = try await Self.collect(response.body, upTo: limit, before: deadline)
            } catch is NIOTooManyBytesError {
                throw FolioError.providerFailure(
                    "the server's answer to \(method) \(path) is longer than the \(limit) bytes read",
                    retryable: false)
            }
            let bytes = collected.readBytes(length: collected.readableBytes) ?? []
            return WebDAVResponse(status: Int(response.status.code), headers: Self.headers(response.headers), body: Data(bytes))
        }
    }

    /// The whole of `body` (at most `limit` bytes), read by `deadline`: a server that sends a byte now and then,
    /// each within the read time-out, would otherwise hold the call for ever. Past the deadline the read is
    /// cancelled (the connection closed) and the answer is `HTTPClientError.deadlineExceeded`.
    private static func collect(
        _ body: HTTPClientResponse.Body, upTo limit: Int, before deadline: ContinuousClock.Instant
    ) async throws -> ByteBuffer {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: limit) }
            group.addTask {
                try await Task.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let collected = first else {
                throw HTTPClientError.deadlineExceeded
            }
            return collected
        }
    }

    /// A download that stopped on the way (the connection dropped or timed out): how far it got, and why.
    struct PartialDownload: Error {
        /// Bytes written before it stopped.
        var written: Int64
        /// Why it stopped.
        var failure: FolioError
    }

    /// GETs `path` into `destination` (the file is created if missing; bytes are written at their offsets),
    /// asking for `range` when given. Returns the answer (without body) and the bytes written: a `206` is checked
    /// against the range asked for, a `200` to a ranged request is skipped to the range's start. `accept` sees a
    /// `200` or `206` answer's headers before any byte is written, and refuses the body by throwing (a version that
    /// is not the one asked for must never reach the file, not even for a moment). Tried once: a transport failure
    /// is a ``PartialDownload`` saying how far it got, so the caller goes on from there.
    func download(
        _ path: String, headers: [(String, String)], range: Range<Int64>?, to destination: FilePath,
        accept: @escaping @Sendable (WebDAVResponse) throws(FolioError) -> Void = { _ in },
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> (response: WebDAVResponse, written: Int64) {
        var all = headers
        if let range { all.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        let writer = BodyToFile(range: range, destination: destination, path: path, accept: accept, progress: progress)
        do {
            var request = try HTTPClient.Request(url: configuration.url(path), method: .GET)
            for (name, value) in requestHeaders("GET", path, all) { request.headers.add(name: name, value: value) }
            // No deadline for the whole body (a big file takes what it takes): the client's read time-out ends a
            // server that stops sending. The writer runs on its connection's own event loop (one of the group's,
            // always the same for downloads, so their connections are reused): on another, each part would wake
            // that loop's thread.
            let task = http.execute(
                request: request, delegate: writer, eventLoop: .delegateAndChannel(on: downloadLoop))
            try await withTaskCancellationHandler {
                try await task.get()
            } onCancel: {
                task.cancel()
            }
            guard let answer = writer.answer else { throw FolioError.io("GET \(path) ended without an answer") }
            return (answer, writer.written)
        } catch let error as FolioError {
            throw error
        } catch let error as Errno {
            throw FolioError.system(error, "writing \(destination)")
        } catch let error as HTTPClientError where error == .cancelled || Task.isCancelled {
            throw FolioError.interrupted("GET \(path) cancelled")
        } catch is CancellationError {
            throw FolioError.interrupted("GET \(path) cancelled")
        } catch {
            throw PartialDownload(written: writer.written, failure: Self.failure(error, method: "GET"))
        }
    }

    /// Runs `body`, trying again what the server refused for a passing reason: a `503` or `429` (after its
    /// `Retry-After`, if it says one within 30 s), a connection that could not be made, and — for requests that
    /// change nothing — a `500`, `502` or `504` and a connection lost on the way. Other answers and errors go to
    /// the caller, at once for a failure only the user can clear (TLS).
    private func withRetries(
        _ method: String, _ body: @Sendable () async throws -> WebDAVResponse
    ) async throws(FolioError) -> WebDAVResponse {
        let readOnly = ["GET", "HEAD", "PROPFIND", "REPORT", "OPTIONS"].contains(method)
        var attempt = 0
        while true {
            attempt += 1
            let wait: Duration
            do {
                let response = try await body()
                let refused = [503, 429].contains(response.status)
                    || (readOnly && [500, 502, 504].contains(response.status))  // a read changes nothing
                guard refused, attempt < configuration.attempts,
                    let delay = Self.retryAfter(response.header("retry-after"), attempt: attempt),
                    delay <= .seconds(30)
                else { return response }
                wait = delay
            } catch let error as FolioError {
                throw error
            } catch is CancellationError {
                throw .interrupted("\(method) cancelled")
            } catch {
                let failure = Self.failure(error, method: method)
                if case .providerFailure(_, retryable: false) = failure { throw failure }  // TLS: the user must act
                guard attempt < configuration.attempts, readOnly || Self.neverSent(error) else { throw failure }
                wait = Self.backoff(attempt: attempt)
            }
            do {
                try await Task.sleep(for: wait)
            } catch {
                throw .interrupted("\(method) cancelled")
            }
        }
    }

    /// Sends one request and returns the answer with its body still to be read; errors are the transport's own.
    func execute(
        _ method: String, _ path: String, headers: [(String, String)], body: Body
    ) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: configuration.url(path))
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in requestHeaders(method, path, headers) { request.headers.add(name: name, value: value) }
        switch body {
        case .none:
            break
        case .bytes(let data):
            request.body = .bytes(ByteBuffer(bytes: data))
        case .file(let file):
            // stat(2), which follows symlinks: the uploader hands over `/proc/self/fd/N` of the version file.
            var info = stat()
            guard stat(file.string, &info) == 0 else {
                throw FolioError.io("the content to send, \(file), cannot be read: \(Errno(rawValue: errno))")
            }
            let size = Int64(info.st_size)
            request.body = .stream(FileChunks(file: file), length: .known(size))
        }
        return try await http.execute(request, timeout: Self.timeAmount(configuration.requestTimeout))
    }

    /// The headers a request carries: `headers`, the lock tokens of ``WebDAVLock`` and the credentials.
    private func requestHeaders(_ method: String, _ path: String, _ headers: [(String, String)]) -> [(String, String)] {
        headers + WebDAVLock.headers(method, path) + (authorization.map { [("Authorization", $0)] } ?? [])
    }

    /// `duration` for NIO, to the nanosecond (a time-out under a second stays one).
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// The response's headers by lowercased name; a header sent more than once is its values joined with `, `
    /// (RFC 9110 §5.3: Apache sends `DAV` twice).
    static func headers(_ fields: HTTPHeaders) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in fields {
            let key = name.lowercased()
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        return headers
    }

    /// The first byte of a `Content-Range: bytes A-B/N` header.
    static func contentRangeStart(_ header: String?) -> Int64? {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst(6)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash].trimmingCharacters(in: .whitespaces))
    }

    /// The wait a `Retry-After` asks for (seconds or an HTTP date), or the backoff of `attempt` when it says none.
    static func retryAfter(_ header: String?, attempt: Int) -> Duration? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
            return backoff(attempt: attempt)
        }
        if let seconds = Int(header) { return .seconds(max(0, seconds)) }
        if let date = WebDAVProperties.httpDate(header) {
            return .milliseconds(max(0, Int(date.timeIntervalSinceNow * 1000)))
        }
        return backoff(attempt: attempt)
    }

    /// 250 ms, doubling with each attempt, jittered by up to half either way (clients retrying together spread).
    static func backoff(attempt: Int) -> Duration {
        let base = 250.0 * pow(2.0, Double(max(0, attempt - 1)))
        return .milliseconds(Int(base * Double.random(in: 0.5...1.5)))
    }

    /// Whether the request surely never reached the server, because no connection could be made (so even a
    /// request that changes something may go again): NIO's failure to connect (refused, unreachable, a name that
    /// does not resolve) or a connect time-out. A connection lost later (reset, closed, timed out while reading)
    /// may have carried the request.
    static func neverSent(_ error: any Error) -> Bool {
        switch error {
        case is NIOConnectionError:
            return true
        case let error as HTTPClientError:
            return error == .connectTimeout
        case let error as ChannelError:
            if case .connectTimeout = error { return true }
            return false
        case let error as IOError:
            // What the pool reports for a connection the kernel refused (no one listens) or could not route.
            return [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(error.errnoCode)
        default:
            return false
        }
    }

    /// A transport failure as Folio's error: a TLS failure (a certificate that is not trusted, a server that does
    /// not speak TLS) and an address the client cannot use need the user; anything else is an unreachable server,
    /// `.offline`.
    static func failure(_ error: any Error, method: String) -> FolioError {
        switch error {
        case is NIOSSLError, is NIOSSLExtraError, is BoringSSLError:
            return .providerFailure(
                "TLS with the server failed (\(error)): is the certificate trusted? (--ca-file)", retryable: false)
        case let error as HTTPClientError
        where [.invalidURL, .emptyHost, .emptyScheme].contains(error):
            return .providerFailure("\(method): the server's address cannot be used (\(error))", retryable: false)
        default:
            return .offline("the server cannot be reached (\(method): \(error))")
        }
    }
}

/// A file's bytes in chunks of 1 MiB, read as the request body is sent; the file is closed when the body ends
/// or is abandoned.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let file: FilePath

    /// The open file of one pass over it.
    final class OpenFile: @unchecked Sendable {
        let descriptor: SystemPackage.FileDescriptor
        init(_ file: FilePath) throws { descriptor = try SystemPackage.FileDescriptor.open(file, .readOnly) }
        deinit { try? descriptor.close() }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let file: FilePath
        var open: OpenFile?
        var done = false

        mutating func next() async throws -> ByteBuffer? {
            if done { return nil }
            let open = try self.open ?? OpenFile(file)
            self.open = open
            var buffer = ByteBuffer()
            let count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 1 << 20) { bytes in
                try open.descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes.prefix(1 << 20)))
            }
            if count == 0 {
                done = true
                self.open = nil
                return nil
            }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(file: file) }
}
