import Foundation
import FolioCore

/// Small helpers over `AF_UNIX` stream sockets for the control channel.
enum UnixSocket {
    static func address(_ path: String) throws(FolioError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .nameTooLong("socket path \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Listens on `path` (replacing a stale socket file).
    static func listen(at path: String) throws(FolioError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(.init(rawValue: errno), "socket") }
        unlink(path)
        var address = try address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else {
            let error = errno
            close(fd)
            throw .system(.init(rawValue: error), "bind control socket \(path)")
        }
        chmod(path, 0o600)
        return fd
    }

    /// Connects to `path`.
    static func connect(to path: String) throws(FolioError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(.init(rawValue: errno), "socket") }
        var address = try address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let error = errno
            close(fd)
            throw .system(.init(rawValue: error), "connect to \(path)")
        }
        return fd
    }

    /// The user id of the process at the other end of the connected socket `fd` (`SO_PEERCRED`, as it was at
    /// `connect` or `listen`), or `nil` if the kernel does not say.
    static func peerUID(_ fd: Int32) -> uid_t? {
        // `struct ucred` (pid, uid, gid), which Glibc's Swift module leaves out.
        var credentials: [UInt32] = [0, 0, 0]
        var length = socklen_t(3 * MemoryLayout<UInt32>.size)
        let result = credentials.withUnsafeMutableBytes {
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, $0.baseAddress, &length)
        }
        guard result == 0, length == socklen_t(3 * MemoryLayout<UInt32>.size) else { return nil }
        return uid_t(credentials[1])
    }

    /// Whether `uid` may talk to the other end of a control connection: the same user as this process, or root.
    static func isTrusted(_ uid: uid_t?) -> Bool {
        guard let uid else { return false }
        return uid == geteuid() || uid == 0
    }

    /// Bounds how long a read on `fd` may wait (`SO_RCVTIMEO`).
    static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads one line (without the newline).
    static func readLine(_ fd: Int32, limit: Int = 1 << 20) -> String? {
        var data = [UInt8]()
        var byte: UInt8 = 0
        while data.count < limit {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return data.isEmpty ? nil : String(decoding: data, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { break }
            data.append(byte)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes a line.
    static func writeLine(_ fd: Int32, _ line: String) {
        let bytes = Array((line + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            written += count
        }
    }
}
