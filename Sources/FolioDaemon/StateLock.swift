import FolioCore
import Foundation
import SystemPackage

/// An exclusive lock on a state folder, so two daemons never share one store and cache. The lock file names
/// its holder (process id, mountpoint, remote), so a daemon that finds the folder in use can say where.
struct StateLock: Sendable {
    private let fd: Int32

    /// The lock file of the state folder `directory`.
    static func path(in directory: FilePath) -> String { directory.appending("daemon.lock").string }

    /// Takes the lock of `directory` for the daemon that mounts `remote` at `mountpoint`, or says who holds it.
    static func acquire(in directory: FilePath, remote: String, mountpoint: String) throws(FolioError) -> StateLock {
        let path = path(in: directory)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(.init(rawValue: errno), "open \(path)") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw .busy(inUseMessage(directory: directory, remote: remote))
        }
        ftruncate(fd, 0)
        let holder = "\(getpid())\n\(mountpoint)\n\(remote)\n"
        _ = holder.withCString { write(fd, $0, strlen($0)) }
        return StateLock(fd: fd)
    }

    /// What to tell a user whose daemon for `remote` found the state folder `directory` locked.
    private static func inUseMessage(directory: FilePath, remote: String) -> String {
        let holder = ((try? String(contentsOfFile: path(in: directory), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
        guard holder.count >= 3 else { return "another Folio daemon uses the state folder \(directory)" }
        let (pid, mountpoint, holderRemote) = (holder[0], holder[1], holder[2])
        if holderRemote == remote {
            return "\(remote) is already mounted at \(mountpoint) (Folio daemon pid \(pid), state folder "
                + "\(directory)): unmount it first, or add an app view with --app ID --of \(mountpoint)"
        }
        return "the state folder \(directory) is in use by the mount of \(holderRemote) at \(mountpoint) "
            + "(Folio daemon pid \(pid)): give this mount another --state"
    }

    /// Runs `body` if no daemon holds the lock of `directory` (keeping others out while it runs); returns
    /// whether it ran.
    static func whileUnused(_ directory: FilePath, _ body: () -> Void) -> Bool {
        let fd = open(path(in: directory), O_RDWR | O_CLOEXEC)
        if fd < 0 {
            body()
            return true
        }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        body()
        return true
    }

    /// Gives the lock up.
    func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
