import Foundation
import NIOCore
import NIOHTTP1

/// The channel handler behind ``MisbehavingServer``: gathers each request, asks the server's script for its reply,
/// and carries the reply out on the connection (every write goes through the channel, so delayed and streamed
/// replies can run from the event loop after the handler has returned).
final class MisbehavingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    typealias Reply = MisbehavingServer.Reply

    private let reply: @Sendable (MisbehavingServer.Request) -> Reply
    private var head: HTTPRequestHead?
    private var body = Data()

    /// A handler that answers each request with what `reply` says.
    init(reply: @escaping @Sendable (MisbehavingServer.Request) -> Reply) {
        self.reply = reply
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = Data()
        case .body(let buffer):
            let room = MisbehavingServer.bodyLimit - body.count
            if room > 0 { body.append(contentsOf: buffer.readableBytesView.prefix(room)) }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = MisbehavingServer.Request(
                method: head.method.rawValue, path: head.uri, headers: head.headers, body: body,
                arrival: .now)
            Self.perform(reply(request), for: request, on: context.channel)
        }
    }

    /// Carries out `reply` to `request` on `channel`.
    static func perform(_ reply: Reply, for request: MisbehavingServer.Request, on channel: any Channel) {
        switch reply {
        case .answer(let status, let headers, let body):
            writeHead(status, headers + [("Content-Length", "\(body.count)")], on: channel)
            if !body.isEmpty {
                channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
            }
            channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
        case .stream(let status, let headers, let length, let byte):
            writeHead(status, headers + (length.map { [("Content-Length", "\($0)")] } ?? []), on: channel)
            pump(ByteBuffer(repeating: byte, count: 64 << 10), remaining: length, on: channel)
        case .content(let data, let etag, let honoursRange, let cutAfter):
            let (status, headers, body) = content(data, etag: etag, honoursRange: honoursRange, request: request)
            let next: Reply = cutAfter.map { .cut(status, headers: headers, body: body, after: $0) }
                ?? .answer(status, headers: headers, body: body)
            perform(next, for: request, on: channel)
        case .cut(let status, let headers, let body, let after):
            writeHead(status, headers + [("Content-Length", "\(body.count)")], on: channel)
            let part = HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body.prefix(max(0, after)))))
            channel.writeAndFlush(part).whenComplete { _ in channel.close(promise: nil) }
        case .trickle(let status, let headers, let interval):
            writeHead(status, headers, on: channel)
            trickle(every: timeAmount(interval), on: channel)
        case .delayed(let delay, let reply):
            channel.eventLoop.scheduleTask(in: timeAmount(delay)) {
                perform(reply, for: request, on: channel)
            }
        case .never:
            break
        }
    }

    private static func writeHead(_ status: Int, _ headers: [(String, String)], on channel: any Channel) {
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers))
        channel.write(HTTPServerResponsePart.head(head), promise: nil)
    }

    /// Writes `chunk` again and again (`remaining` bytes in all, or forever), each write only once the one before
    /// has gone out (so nothing piles up in memory), until the client goes away.
    private static func pump(_ chunk: ByteBuffer, remaining: Int64?, on channel: any Channel) {
        var piece = chunk
        if let remaining {
            guard remaining > 0 else {
                channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
                return
            }
            if remaining < Int64(chunk.readableBytes) {
                piece = chunk.getSlice(at: chunk.readerIndex, length: Int(remaining)) ?? chunk
            }
        }
        let sent = Int64(piece.readableBytes)
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(piece))).whenComplete { result in
            switch result {
            case .success:
                // On the next tick: a write that completes at once would otherwise recurse without end.
                channel.eventLoop.execute { pump(chunk, remaining: remaining.map { $0 - sent }, on: channel) }
            case .failure:
                channel.close(promise: nil)
            }
        }
    }

    /// Writes one byte now and again every `interval`, until the client goes away.
    private static func trickle(every interval: TimeAmount, on channel: any Channel) {
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: " ")))).whenComplete {
            guard case .success = $0 else { return channel.close(promise: nil) }
            channel.eventLoop.scheduleTask(in: interval) { trickle(every: interval, on: channel) }
        }
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// The answer to a `GET` of the file `data`: the range asked for (`Range: bytes=A-B` or `bytes=A-`) as a
    /// `206` when `honoursRange` and it can be satisfied, else the whole as a `200`.
    private static func content(
        _ data: Data, etag: String?, honoursRange: Bool, request: MisbehavingServer.Request
    ) -> (Int, [(String, String)], Data) {
        var headers = [("Accept-Ranges", "bytes")]
        if let etag { headers.append(("ETag", etag)) }
        guard honoursRange, let range = byteRange(request.header("range"), size: data.count) else {
            return (200, headers, data)
        }
        headers.append(("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(data.count)"))
        return (206, headers, data.subdata(in: range))
    }

    /// The bytes a `Range: bytes=A-B` (or `bytes=A-`) header asks of a file of `size` bytes, if it can be had.
    static func byteRange(_ header: String?, size: Int) -> Range<Int>? {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let bounds = header.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int(bounds[0]), start < size else { return nil }
        let end = bounds[1].isEmpty ? size - 1 : min(Int(bounds[1]) ?? -1, size - 1)
        guard end >= start else { return nil }
        return start..<(end + 1)
    }
}
