import FolioCore

/// Handlers of names: lookups, creates, removals, renames, links.
extension FUSEHandlers {
    /// `lookup`. A folder never listed is listed from the provider first, from a task.
    func lookup(_ name: FUSERequest.Name, _ reply: Reply) {
        guard fileSystem.needsListing(name.parent) else {
            reply.entry { try fileSystem.lookup(parent: name.parent, name: name.name) }
            return
        }
        Task {
            do {
                reply.entry(try await fileSystem.lookupListing(parent: name.parent, name: name.name))
            } catch {
                reply.fail(error)
            }
        }
    }

    /// `forget`: the kernel dropped references; an inode is kept until its count reaches 0.
    func forget(_ forgets: [FUSERequest.Forget], _ reply: Reply) {
        for forget in forgets {
            fileSystem.forget(forget.ino, count: forget.count)
        }
        reply.none()
    }

    /// `readlink`.
    func readSymlink(_ ino: UInt64, _ reply: Reply) {
        do {
            reply.symlinkTarget(try fileSystem.readSymlink(ino))
        } catch {
            reply.fail(error)
        }
    }

    /// `mknod`: files, FIFOs, sockets and device nodes (the last three local-only).
    func makeNode(_ request: FUSERequest.MakeNode, _ caller: FUSECaller, _ reply: Reply) {
        reply.entry {
            try fileSystem.makeNode(
                parent: request.at.parent, name: request.at.name, kind: request.kind,
                permissions: request.permissions, device: request.device, context: context(caller))
        }
    }

    /// `mkdir`.
    func makeDirectory(_ request: FUSERequest.MakeDirectory, _ caller: FUSECaller, _ reply: Reply) {
        reply.entry {
            try fileSystem.makeDirectory(
                parent: request.at.parent, name: request.at.name, permissions: request.permissions,
                context: context(caller))
        }
    }

    /// `symlink`.
    func makeSymlink(_ at: FUSERequest.Name, target: String, _ caller: FUSECaller, _ reply: Reply) {
        reply.entry {
            try fileSystem.makeSymlink(parent: at.parent, name: at.name, target: target, context: context(caller))
        }
    }

    /// `unlink`.
    func unlink(_ name: FUSERequest.Name, _ caller: FUSECaller, _ reply: Reply) {
        reply.succeed { try fileSystem.unlink(parent: name.parent, name: name.name, context: context(caller)) }
    }

    /// `rmdir`.
    func removeDirectory(_ name: FUSERequest.Name, _ reply: Reply) {
        reply.succeed { try fileSystem.removeDirectory(parent: name.parent, name: name.name) }
    }

    /// `rename`, with `RENAME_NOREPLACE` and `RENAME_EXCHANGE`.
    func rename(_ request: FUSERequest.Rename, _ caller: FUSECaller, _ reply: Reply) {
        reply.succeed {
            try fileSystem.rename(
                parent: request.from.parent, name: request.from.name, newParent: request.to.parent,
                newName: request.to.name, flags: request.flags, context: context(caller))
        }
    }

    /// `link`: hard links are refused (`EPERM`) by the core.
    func link(_ ino: UInt64, at: FUSERequest.Name, _ reply: Reply) {
        reply.succeed { _ = try fileSystem.link(ino, newParent: at.parent, newName: at.name) }
    }
}
