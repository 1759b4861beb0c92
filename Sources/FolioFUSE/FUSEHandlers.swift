import FolioCore
import Logging
import Synchronization

/// One handler per FUSE operation. Each takes its operation's typed request (``FUSERequest``), calls the core,
/// and answers through the request's ``Reply``: at once for cheap operations, from a task for those that may
/// wait (materialization, coordination) so no worker thread blocks. Handlers see no C argument and send no
/// invalidation (the ``KernelNotifier`` does, from its own queue).
final class FUSEHandlers: Sendable {
    let fileSystem: FolioFileSystem
    let logger: Logger
    /// Tasks of requests the kernel may interrupt (``interruptible(_:_:)``).
    let interrupts = Mutex(InterruptRegistry())

    init(fileSystem: FolioFileSystem, logger: Logger) {
        self.fileSystem = fileSystem
        self.logger = logger
    }

    /// Hands `request` to its handler.
    func handle(_ request: FUSERequest, from caller: FUSECaller, _ reply: Reply) {
        switch request {
        case .lookup(let name): lookup(name, reply)
        case .forget(let forgets): forget(forgets, reply)
        case .getAttributes(let ino, let handle): getAttributes(ino, handle: handle, reply)
        case .setAttributes(let request): setAttributes(request, caller, reply)
        case .readSymlink(let ino): readSymlink(ino, reply)
        case .makeNode(let request): makeNode(request, caller, reply)
        case .makeDirectory(let request): makeDirectory(request, caller, reply)
        case .makeSymlink(let at, let target): makeSymlink(at, target: target, caller, reply)
        case .unlink(let name): unlink(name, caller, reply)
        case .removeDirectory(let name): removeDirectory(name, reply)
        case .rename(let request): rename(request, caller, reply)
        case .link(let ino, let at): link(ino, at: at, reply)
        case .open(let request): open(request, caller, reply)
        case .create(let request): create(request, caller, reply)
        case .read(let request): read(request, reply)
        case .write(let request): write(request, reply)
        case .flush(let handle): flush(handle, caller, reply)
        case .release(let handle): release(handle, reply)
        case .synchronize(let handle): synchronize(handle, reply)
        case .allocate(let request): allocate(request, reply)
        case .seek(let request): seek(request, reply)
        case .openDirectory(let request): openDirectory(request, reply)
        case .readDirectory(let request): readDirectory(request, reply)
        case .releaseDirectory(let handle): releaseDirectory(handle, reply)
        case .synchronizeDirectory: synchronizeDirectory(reply)
        case .statistics: reply.statistics(fileSystem.statistics())
        case .setExtendedAttribute(let request): setExtendedAttribute(request, reply)
        case .extendedAttribute(let ino, let name, let size): extendedAttribute(ino, name: name, size: size, reply)
        case .extendedAttributeNames(let ino, let size): extendedAttributeNames(ino, size: size, reply)
        case .removeExtendedAttribute(let ino, let name): removeExtendedAttribute(ino, name: name, reply)
        }
    }

    /// The core's view of `caller`: its credentials and its process (the thread's thread group).
    func context(_ caller: FUSECaller) -> RequestContext {
        RequestContext(uid: caller.uid, gid: caller.gid, processID: fileSystem.processID(ofThread: caller.threadID))
    }
}
