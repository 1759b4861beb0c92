import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small HTTP/1.1 server on a random loopback port that misbehaves on purpose, for the fault tests: each request
/// gets what the test scripted for its method and path (a status with headers and a body, a body streamed
/// endlessly or of N bytes or trickled, a file honouring `Range` or not, a connection closed after N bytes of a
/// body, an answer after a delay, or no answer at all), and every request and connection is recorded, so a test
/// can count retries. Started by `init`, ended by ``stop()`` (also from `deinit`, so a failing test still ends it).
final class MisbehavingServer: Sendable {
    /// One request as the server received it.
    struct Request: Sendable {
        /// The method (`PROPFIND`).
        var method: String
        /// The request target as sent (an encoded path).
        var path: String
        /// The headers.
        var headers: HTTPHeaders
        /// The body (at most ``bodyLimit`` bytes of it are kept).
        var body: Data
        /// When the request had come whole.
        var arrival: ContinuousClock.Instant

        /// The first value of the header `name` (any case).
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// What the server does with one request.
    indirect enum Reply: Sendable {
        /// Answers `status` with `headers` and `body` (a `Content-Length` is added).
        case answer(Int, headers: [(String, String)] = [], body: Data = Data())
        /// Answers `status` with a body of `length` bytes of `byte` (`nil`: endless, chunked), streamed as the
        /// client reads it (never built in memory).
        case stream(Int, headers: [(String, String)] = [], length: Int64?, byte: UInt8 = UInt8(ascii: " "))
        /// Answers a `GET` of the file `content`: `206` with the range asked for when `honoursRange`, else `200`
        /// with the whole; the connection is closed after `cutAfter` bytes of the body, if given.
        case content(Data, etag: String? = nil, honoursRange: Bool = true, cutAfter: Int? = nil)
        /// Answers `status` with `headers` and a `Content-Length` of the whole `body`, but closes the connection
        /// after its first `after` bytes.
        case cut(Int, headers: [(String, String)] = [], body: Data, after: Int)
        /// Answers `status` with `headers` and a chunked body of one byte every `interval`, without end (each byte
        /// keeps a read time-out from firing).
        case trickle(Int, headers: [(String, String)] = [], every: Duration)
        /// Does what `reply` says after `delay`.
        case delayed(Duration, Reply)
        /// Never answers (the connection stays open until the client gives up or the server stops).
        case never
    }

    /// The most bytes of a request body kept in ``Request/body``.
    static let bodyLimit = 1 << 20

    /// What the test scripted, and what came.
    private struct State {
        /// Replies by method and path: the n-th request gets the n-th reply, the last one repeats.
        var scripts: [String: [Reply]] = [:]
        /// Replies made from the request, by method and path (these win over ``scripts``).
        var responders: [String: @Sendable (Request) -> Reply] = [:]
        var received: [Request] = []
        /// Connections accepted.
        var connections = 0
    }

    /// The state, shared by the test and the connections' handlers.
    private final class Script: Sendable {
        let state = Mutex(State())
    }

    /// `http://127.0.0.1:PORT`.
    let baseURL: URL
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let script = Script()
    private let stopped = Mutex(false)

    /// Starts the server on a random loopback port; unscripted requests get `501` saying what was not scripted.
    init() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let script = self.script
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                script.state.withLock { $0.connections += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        MisbehavingHandler { request in Self.reply(to: request, script: script) })
                }
            }
        do {
            channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.group = group
        baseURL = URL(string: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)")!
    }

    deinit { stop() }

    /// Scripts the answers to `method` on `path` (an encoded path as the client sends it): the n-th such request
    /// gets `replies[n]`, and every one after the last gets the last.
    func on(_ method: String, _ path: String, _ replies: Reply...) {
        script.state.withLock { $0.scripts[method + " " + path] = replies }
    }

    /// Scripts the answers to `method` on `path` as made by `respond` from each request.
    func on(_ method: String, _ path: String, respond: @escaping @Sendable (Request) -> Reply) {
        script.state.withLock { $0.responders[method + " " + path] = respond }
    }

    /// The requests received so far, in order, of `method` (any if `nil`) on `path` (any if `nil`).
    func requests(_ method: String? = nil, _ path: String? = nil) -> [Request] {
        script.state.withLock { state in
            state.received.filter { (method == nil || $0.method == method) && (path == nil || $0.path == path) }
        }
    }

    /// How many requests of `method` (any if `nil`) on `path` (any if `nil`) were received.
    func count(_ method: String? = nil, _ path: String? = nil) -> Int { requests(method, path).count }

    /// How many connections the server accepted (a client that gives up before sending a request, as in a failed
    /// TLS handshake, makes one and no request).
    var connections: Int { script.state.withLock { $0.connections } }

    /// Closes the listener and every connection; safe to call more than once.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Records `request` and picks its reply.
    private static func reply(to request: Request, script: Script) -> Reply {
        let key = request.method + " " + request.path
        let (responder, reply) = script.state.withLock { state -> ((@Sendable (Request) -> Reply)?, Reply?) in
            let earlier = state.received.count { $0.method == request.method && $0.path == request.path }
            state.received.append(request)
            if let responder = state.responders[key] { return (responder, nil) }
            guard let replies = state.scripts[key], let last = replies.last else { return (nil, nil) }
            return (nil, earlier < replies.count ? replies[earlier] : last)
        }
        if let responder { return responder(request) }
        return reply ?? .answer(501, body: Data("the test scripted nothing for \(key)\n".utf8))
    }
}
