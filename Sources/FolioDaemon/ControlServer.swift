import FolioCore
import Foundation
import Logging

/// The daemon's end of the control socket: answers `folio status` and friends, one JSON line each way.
final class ControlServer: @unchecked Sendable {
    private let path: String
    private let handler: @Sendable (ControlRequest) -> ControlResponse
    private var listener: Int32 = -1
    private var thread: Thread?

    init(path: String, handler: @escaping @Sendable (ControlRequest) -> ControlResponse) {
        self.path = path
        self.handler = handler
    }

    func start() throws(FolioError) {
        _ = try RuntimePaths.privateRuntimeDirectory(creating: true)
        listener = try UnixSocket.listen(at: path)
        let listener = self.listener
        let thread = Thread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return
                }
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                // A request may take long (`folio download`): each connection is served on a thread of its own.
                let worker = Thread { [self] in serve(connection) }
                worker.name = "folio-control-request"
                worker.start()
            }
        }
        thread.name = "folio-control"
        thread.start()
        self.thread = thread
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        // Only the mount's own user and root: another user's request is answered with why, and never read.
        let peer = UnixSocket.peerUID(connection)
        guard UnixSocket.isTrusted(peer) else {
            let who = peer.map(RuntimePaths.userName) ?? "an unknown user"
            let refusal = ControlResponse(
                ok: false, error: "this mount belongs to \(RuntimePaths.userName(geteuid())): only its owner (or "
                    + "root) can control it, not \(who)")
            if let data = try? JSONEncoder().encode(refusal) {
                UnixSocket.writeLine(connection, String(decoding: data, as: UTF8.self))
            }
            return
        }
        // A client that connects and sends nothing does not hold its thread for ever.
        UnixSocket.setReceiveTimeout(connection, seconds: 30)
        guard let line = UnixSocket.readLine(connection) else { return }
        let response: ControlResponse
        if let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8)) {
            response = handler(request)
        } else {
            response = ControlResponse(ok: false, error: "malformed request")
        }
        let data = (try? JSONEncoder().encode(response)) ?? Data("{\"ok\":false}".utf8)
        UnixSocket.writeLine(connection, String(decoding: data, as: UTF8.self))
    }

    func stop() {
        if listener >= 0 {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
            listener = -1
        }
        unlink(path)
    }
}

/// The CLI's end of the control socket.
public enum ControlClient {
    /// Sends a request to the daemon of `mountpoint` and returns its answer.
    public static func send(_ request: ControlRequest, mountpoint: String) throws(FolioError) -> ControlResponse {
        let socketPath = RuntimePaths.controlSocket(forMountpoint: mountpoint).string
        do {
            _ = try RuntimePaths.privateRuntimeDirectory(creating: false)
        } catch .notFound {
            throw .notFound("no Folio daemon answers for \(mountpoint) (socket \(socketPath))")
        }
        let fd: Int32
        do {
            fd = try UnixSocket.connect(to: socketPath)
        } catch {
            throw .notFound("no Folio daemon answers for \(mountpoint) (socket \(socketPath))")
        }
        defer { close(fd) }
        // Not a byte to a listener that is not this user's or root's: it would see every request.
        let peer = UnixSocket.peerUID(fd)
        guard UnixSocket.isTrusted(peer) else {
            let owner = peer.map(RuntimePaths.userName) ?? "an unknown user"
            throw .accessDenied(
                "the control socket \(socketPath) is served by \(owner), not by you or root: nothing was sent to it. "
                    + "Someone else put it there; remove it, and remount \(mountpoint)")
        }
        guard let data = try? JSONEncoder().encode(request) else { throw .invalidArgument("cannot encode request") }
        UnixSocket.writeLine(fd, String(decoding: data, as: UTF8.self))
        guard let line = UnixSocket.readLine(fd) else { throw .io("the daemon for \(mountpoint) sent no answer") }
        guard let response = try? JSONDecoder().decode(ControlResponse.self, from: Data(line.utf8)),
              response.isWellFormed else {
            throw .io(
                "the daemon for \(mountpoint) sent an answer that is not a Folio control reply "
                    + "(\(Wording.count(line.utf8.count, "byte")) on socket \(socketPath))")
        }
        return response
    }

    /// The status answer of the daemon serving the mount at `mountpoint` (canonical path), or `nil` when no
    /// daemon answers for it.
    public static func runningMount(at mountpoint: String) -> ControlResponse? {
        guard let response = try? send(ControlRequest(command: "status"), mountpoint: mountpoint), response.ok
        else { return nil }
        return response
    }

    /// The mountpoint of the Folio mount that contains `path` (walking up to the nearest one with a daemon).
    public static func mountpoint(containing path: String) -> (mountpoint: String, relative: String)? {
        var current = RuntimePaths.canonical(path)
        var relative: [String] = []
        while true {
            if FileManager.default.fileExists(atPath: RuntimePaths.controlSocket(forMountpoint: current).string) {
                return (current, relative.reversed().joined(separator: "/"))
            }
            if current == "/" || current.isEmpty { return nil }
            relative.append((current as NSString).lastPathComponent)
            current = (current as NSString).deletingLastPathComponent
        }
    }
}
