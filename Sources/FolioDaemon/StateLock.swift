import FolioCore
import Foundation
import SystemPackage

/// An exclusive lock on a state folder, so two daemons never share one store and cache.
struct StateLock: Sendable {
    private let fd: Int32

    static func acquire(in directory: FilePath) throws(FolioError) -> StateLock {
        let path = directory.appending("daemon.lock").string
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(.init(rawValue: errno), "open \(path)") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw .busy("another Folio daemon uses the state folder \(directory)")
        }
        ftruncate(fd, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(fd, $0, strlen($0)) }
        return StateLock(fd: fd)
    }

    func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
