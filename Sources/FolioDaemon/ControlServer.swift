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
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
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
        let fd: Int32
        do {
            fd = try UnixSocket.connect(to: socketPath)
        } catch {
            throw .notFound("no Folio daemon answers for \(mountpoint) (socket \(socketPath))")
        }
        defer { close(fd) }
        guard let data = try? JSONEncoder().encode(request) else { throw .invalidArgument("cannot encode request") }
        UnixSocket.writeLine(fd, String(decoding: data, as: UTF8.self))
        guard let line = UnixSocket.readLine(fd),
              let response = try? JSONDecoder().decode(ControlResponse.self, from: Data(line.utf8)) else {
            throw .io("the daemon for \(mountpoint) sent no answer")
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
