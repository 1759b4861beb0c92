import AsyncHTTPClient
import FolioCore
import Foundation
import NIOCore
import NIOHTTP1
import SystemPackage

/// Writes the body of one `GET` into a file at its offsets as it arrives, on the connection's event loop: each
/// part is written where NIO read it, with no hop to a task and no thread woken per part (a 1 GiB download has
/// some 16,000 of them, and those wake-ups held a download to about half of `curl`'s rate).
///
/// The answer's head is checked before any byte is written (``WebDAVClient/download(_:headers:range:to:accept:progress:)``
/// says how); a head that is refused fails the request, which closes its connection unread. An answer other than
/// `200` or `206` has its body dropped. Every method runs on the request's event loop, one at a time (AsyncHTTPClient
/// calls them so); what they keep is read by the caller only once the request ended.
final class BodyToFile: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Void

    /// The range asked for, if any.
    private let range: Range<Int64>?
    private let destination: FilePath
    private let path: String
    private let accept: @Sendable (WebDAVResponse) throws(FolioError) -> Void
    private let progress: @Sendable (Int64) -> Void

    /// The answer's status and headers, once its head came.
    private(set) var answer: WebDAVResponse?
    /// Bytes written so far.
    private(set) var written: Int64 = 0
    /// Body bytes still to drop before the range starts (a server that ignored `Range` sends the whole file).
    private var skip: Int64 = 0
    private var descriptor: SystemPackage.FileDescriptor?

    init(
        range: Range<Int64>?, destination: FilePath, path: String,
        accept: @escaping @Sendable (WebDAVResponse) throws(FolioError) -> Void,
        progress: @escaping @Sendable (Int64) -> Void
    ) {
        self.range = range
        self.destination = destination
        self.path = path
        self.accept = accept
        self.progress = progress
    }

    deinit {
        try? descriptor?.close()
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let answer = WebDAVResponse(
            status: Int(head.status.code), headers: WebDAVClient.headers(head.headers), body: Data())
        self.answer = answer
        guard answer.status == 200 || answer.status == 206 else { return task.eventLoop.makeSucceededVoidFuture() }
        do {
            try accept(answer)
            if let range, answer.status == 206 {
                guard let start = WebDAVClient.contentRangeStart(answer.header("content-range")),
                    start == range.lowerBound
                else {
                    throw FolioError.providerFailure(
                        "the server answered GET \(path) bytes \(range) with another range "
                            + "(\(answer.header("content-range") ?? "none"))", retryable: true)
                }
            } else if let range {
                skip = range.lowerBound  // the server ignored Range: the whole file comes
            }
            descriptor = try SystemPackage.FileDescriptor.open(
                destination, .writeOnly, options: [.create], permissions: [.ownerReadWrite])
            return task.eventLoop.makeSucceededVoidFuture()
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard let descriptor else { return task.eventLoop.makeSucceededVoidFuture() }  // an error page
        var part = buffer
        if skip > 0 {
            let dropped = min(Int64(part.readableBytes), skip)
            part.moveReaderIndex(forwardBy: Int(dropped))
            skip -= dropped
        }
        if let range, written + Int64(part.readableBytes) > Int64(range.count) {
            part = part.getSlice(at: part.readerIndex, length: Int(Int64(range.count) - written)) ?? ByteBuffer()
        }
        guard part.readableBytes > 0 else { return task.eventLoop.makeSucceededVoidFuture() }
        do {
            let at = (range?.lowerBound ?? 0) + written
            _ = try part.withUnsafeReadableBytes { bytes in try descriptor.writeAll(toAbsoluteOffset: at, bytes) }
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
        written += Int64(part.readableBytes)
        progress(written)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        try descriptor?.close()
        descriptor = nil
    }
}
