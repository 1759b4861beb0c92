import FolioCore
import Glibc
import SystemPackage

/// The lock every process working on one local remote takes around each check-then-act on it: an exclusive
/// `flock` of `DIR/.folio/lock`. Inside one process the ``SharedRemoteTree``'s mutex already serializes the
/// providers; this makes the same checks atomic against other processes (two mounts of one remote are two
/// devices), so a modify, delete, move or create at a base version or a name is decided by exactly one of them.
///
/// The file is opened anew for each hold rather than kept open: a remote folder replaced meanwhile (an unmounted
/// share leaves an empty folder behind) must not leave one process locking the old folder's file while another
/// locks the new one's. It is opened read-only (`flock` needs no more) and made readable by everyone, so users
/// sharing a remote share its lock. A remote this process cannot write (read-only, or another user's folder) is
/// not locked: no change of ours can land there, and reading it needs no lock. A remote without its `.folio`
/// folder cannot be locked, and is offline.
struct RemoteLock: Sendable {
    /// The lock file.
    let path: FilePath
    /// How long a hold waits for another process before the call fails with `.busy` (which is retried).
    let patience: Duration

    /// The lock of the remote at `layout`.
    init(layout: RemoteLayout, patience: Duration = .seconds(30)) {
        path = layout.stateDirectory.appending("lock")
        self.patience = patience
    }

    /// Runs `body` holding the lock. Another process holds it for one synchronous check-then-act (milliseconds;
    /// a scan of a big container longer), and the kernel releases it when that process dies; a holder that does
    /// not let go within ``patience`` (stopped, or stuck on a network filesystem) makes this call `.busy`.
    func withExclusiveLock<Result>(_ body: () throws -> Result) throws -> Result {
        guard let descriptor = try open() else { return try body() }
        defer { try? descriptor.close() }
        try acquire(descriptor)
        // Closing the descriptor releases the lock.
        return try body()
    }

    /// The lock file, open (made if missing); `nil` if this process cannot make it because it cannot write the
    /// remote.
    private func open() throws -> FileDescriptor? {
        do {
            return try FileDescriptor.open(path, .readOnly, options: [.closeOnExec])
        } catch Errno.noSuchFileOrDirectory {
            // Made below.
        } catch let error as Errno {
            throw FolioError.system(error, "open the remote's lock file \(path)")
        }
        do {
            let created = try FileDescriptor.open(
                path, .writeOnly, options: [.create, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
            try? SystemCalls.setPermissions(path, 0o644)  // whatever the umask
            return created
        } catch Errno.noSuchFileOrDirectory, Errno.notDirectory {
            throw FolioError.offline("the remote's lock file \(path) cannot be made: its folder is missing")
        } catch Errno.readOnlyFileSystem, Errno.permissionDenied {
            return nil
        } catch let error as Errno {
            throw FolioError.system(error, "make the remote's lock file \(path)")
        }
    }

    /// Takes the lock on `descriptor`, waiting with growing pauses up to ``patience``.
    private func acquire(_ descriptor: FileDescriptor) throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: patience)
        var pause: UInt32 = 100
        while true {
            if try SystemCalls.tryExclusiveLock(descriptor, path: path) { return }
            guard clock.now < deadline else {
                throw FolioError.busy("another Folio process has held the remote's lock \(path) for \(patience)")
            }
            usleep(pause)
            pause = min(pause * 2, 10_000)
        }
    }
}
