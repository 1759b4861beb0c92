import FolioCore
import SystemPackage

/// Handlers of open files: open, create, read, write, flush, release, fsync, fallocate, lseek.
extension FUSEHandlers {
    /// `open`. A placeholder is materialized and a second writer waits for the first, from a task the kernel may
    /// interrupt; an open that needs neither is answered at once.
    func open(_ request: FUSERequest.Open, _ caller: FUSECaller, _ reply: Reply) {
        let context = context(caller)
        let flags = request.info.flags
        do {
            if let opened = try fileSystem.tryOpen(request.ino, flags: flags, context: context) {
                reply.opened(opened, info: request.info)
                return
            }
        } catch {
            reply.fail(error)
            return
        }
        interruptible(reply) { [fileSystem] finish in
            do {
                let opened = try await fileSystem.open(request.ino, flags: flags, context: context)
                var taken = false
                finish { taken = reply.opened(opened, info: request.info) }
                if !taken { try? fileSystem.release(opened.handle) }
            } catch {
                finish { reply.fail(error) }
            }
        }
    }

    /// `create`: a new file, opened for its creator.
    func create(_ request: FUSERequest.Create, _ caller: FUSECaller, _ reply: Reply) {
        do {
            let (attributes, handle) = try fileSystem.createFile(
                parent: request.at.parent, name: request.at.name, permissions: request.permissions,
                flags: request.info.flags, context: context(caller))
            let opened = OpenedFile(handle: handle, cachePolicy: fileSystem.cachePolicy(of: handle))
            if !reply.created(attributes, opened, info: request.info) { try? fileSystem.release(handle) }
        } catch {
            reply.fail(error)
        }
    }

    /// `read`: spliced from the handle's version file. Bytes of a placeholder still on their way are answered
    /// from a task the kernel may interrupt, once they are here.
    func read(_ request: FUSERequest.Read, _ reply: Reply) {
        do {
            let source = try fileSystem.readSource(request.handle, offset: request.offset, size: request.size)
            let available = max(0, min(Int64(request.size), source.size - request.offset))
            guard let pending = source.pending, available > 0 else {
                reply.data(from: source.fd, offset: request.offset, count: available)
                return
            }
            interruptible(reply) { finish in
                do {
                    try await pending.waitUntilPresent(request.offset..<request.offset + available)
                    finish { reply.data(from: source.fd, offset: request.offset, count: available) }
                } catch {
                    finish { reply.fail(error) }
                }
            }
        } catch {
            reply.fail(error)
        }
    }

    /// `write`.
    func write(_ request: FUSERequest.Write, _ reply: Reply) {
        do {
            reply.written(try fileSystem.write(request.handle, offset: request.offset, bytes: request.bytes))
        } catch {
            reply.fail(error)
        }
    }

    /// `flush`: a `close()` by a process, which may commit its write session.
    func flush(_ handle: UInt64, _ caller: FUSECaller, _ reply: Reply) {
        reply.succeed { try fileSystem.flush(handle, processID: fileSystem.processID(ofThread: caller.threadID)) }
    }

    /// `release`.
    func release(_ handle: UInt64, _ reply: Reply) {
        reply.succeed { try fileSystem.release(handle) }
    }

    /// `fsync`: commits the handle's write session.
    func synchronize(_ handle: UInt64, _ reply: Reply) {
        reply.succeed { try fileSystem.synchronize(handle) }
    }

    /// `fallocate`: modes Folio does not support are refused (`EOPNOTSUPP`).
    func allocate(_ request: FUSERequest.Allocate, _ reply: Reply) {
        guard let change = request.change else {
            reply.refuse(.notSupported)
            return
        }
        reply.succeed {
            try fileSystem.changeSpace(request.handle, change, offset: request.offset, length: request.length)
        }
    }

    /// `lseek` to data or a hole (`ENXIO` past the last one); other seeks are the kernel's (`EINVAL` here).
    func seek(_ request: FUSERequest.Seek, _ reply: Reply) {
        guard let target = request.target else {
            reply.refuse(.invalidArgument)
            return
        }
        do {
            guard let found = try fileSystem.seek(request.handle, to: target, from: request.offset) else {
                reply.refuse(.noSuchAddressOrDevice)
                return
            }
            reply.sought(found)
        } catch {
            reply.fail(error)
        }
    }
}
