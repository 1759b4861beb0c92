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
/// locks the new one's. A remote without its `.folio` folder cannot be locked, and is offline.
struct RemoteLock: Sendable {
    /// The lock file.
    let path: FilePath

    /// The lock of the remote at `layout`.
    init(layout: RemoteLayout) {
        path = layout.stateDirectory.appending("lock")
    }

    /// Runs `body` holding the lock. The wait is not bounded: another process holds it only for one synchronous
    /// check-then-act (milliseconds; a scan of a big container longer), and the kernel releases it when that
    /// process dies.
    func withExclusiveLock<Result>(_ body: () throws -> Result) throws -> Result {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(
                path, .readWrite, options: [.create, .closeOnExec], permissions: [.ownerReadWrite])
        } catch let error as Errno where error == .noSuchFileOrDirectory || error == .notDirectory {
            throw FolioError.offline("the remote's lock file \(path) cannot be made: its folder is missing")
        } catch let error as Errno {
            throw FolioError.system(error, "open the remote's lock file \(path)")
        }
        defer { try? descriptor.close() }
        guard SystemCalls.retryingInterrupts({ flock(descriptor.rawValue, LOCK_EX) }) == 0 else {
            throw SystemCalls.lastError("lock", path)
        }
        // Closing the descriptor releases the lock.
        return try body()
    }
}
