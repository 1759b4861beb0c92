import CFUSE
import FolioCore
import Foundation

/// The libfuse low-level operations table. Each callback copies its arguments into Swift values, calls the
/// core, and replies — at once for cheap operations, from a task for those that may wait.
enum FUSEOperations {
    static func table() -> fuse_lowlevel_ops {
        var ops = fuse_lowlevel_ops()
        ops.`init` = { userdata, conn in
            guard let conn else { return }
            let wanted = UInt32(FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE
                | FUSE_CAP_PARALLEL_DIROPS | FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_ASYNC_READ)
            conn.pointee.want |= wanted & conn.pointee.capable
            // No writeback cache, and no atomic O_TRUNC: truncation arrives as a setattr whose reply sets the
            // kernel's size, so a reader of an older version is never cut short by a writer's truncate.
            conn.pointee.want &= ~UInt32(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_ATOMIC_O_TRUNC)
            conn.pointee.max_write = 1 << 20
            // The kernel caps the mount's readahead at this (and at the backing device's setting, which
            // FUSEMount raises where it may): several 1 MiB reads in flight during a sequential scan.
            let readahead = userdata.map { Unmanaged<FUSEMount>.fromOpaque($0).takeUnretainedValue().options.readaheadKiB }
            conn.pointee.max_readahead = UInt32(max(1 << 20, (readahead ?? 0) << 10))
            conn.pointee.max_background = 64
        }
        ops.lookup = { request, parent, name in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "lookup", logger: mount.logger)
            guard let name = FUSEOperations.existingName(name!, reply) else { return }
            if let script = mount.replayScript(request!), FUSEOperations.answerReplayedLookup(
                reply, mount, script, parent: mount.coreIno(parent), name: name) {
                return
            }
            let folder = mount.coreIno(parent)
            if mount.fileSystem.needsListing(folder) {
                // A folder never listed: its children are listed from the provider first.
                Task {
                    do {
                        var entry = mount.entry(try await mount.fileSystem.lookupListing(parent: folder, name: name))
                        reply.answer { fuse_reply_entry($0, &entry) }
                    } catch {
                        reply.fail(error)
                    }
                }
                return
            }
            FUSEOperations.replyEntry(reply, mount) {
                try mount.fileSystem.lookup(parent: folder, name: name)
            }
        }
        ops.forget = { request, ino, count in
            let mount = FUSEMount.from(request)
            mount.fileSystem.forget(mount.coreIno(ino), count: count)
            fuse_reply_none(request)
        }
        ops.forget_multi = { request, count, items in
            let mount = FUSEMount.from(request)
            for index in 0..<count {
                let item = items![index]
                mount.fileSystem.forget(mount.coreIno(item.ino), count: item.nlookup)
            }
            fuse_reply_none(request)
        }
        ops.getattr = { request, ino, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "getattr", logger: mount.logger)
            let handle = fileInfo.map { $0.pointee.fh }.flatMap { $0 == ReplayScript.handle ? nil : $0 }
            do {
                let attributes = try mount.fileSystem.getAttributes(mount.coreIno(ino), handle: handle)
                var value = attributes.statValue
                let timeout = mount.attributeTimeout(attributes)
                reply.answer { fuse_reply_attr($0, &value, timeout) }
            } catch {
                reply.fail(error)
            }
        }
        ops.setattr = { request, ino, attr, toSet, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "setattr", logger: mount.logger, changing: mount.notifier)
            if mount.replayScript(request!) != nil {
                FUSEOperations.answerReplayedAttributeChange(reply, mount, ino: mount.coreIno(ino))
                return
            }
            let changes = FUSEOperations.attributeChanges(attr!.pointee, toSet: toSet)
            let handle = fileInfo.map { $0.pointee.fh }
            let context = mount.context(request!)
            if changes.size == nil {
                do {
                    let attributes = try mount.fileSystem.setAttributesNow(mount.coreIno(ino), changes, handle: handle)
                    var value = attributes.statValue
                    let timeout = mount.attributeTimeout(attributes)
                    reply.answer { fuse_reply_attr($0, &value, timeout) }
                } catch {
                    reply.fail(error)
                }
                return
            }
            Task {
                do {
                    let attributes = try await mount.fileSystem.setAttributes(
                        mount.coreIno(ino), changes, handle: handle, context: context)
                    var value = attributes.statValue
                    let timeout = mount.attributeTimeout(attributes)
                    reply.answer { fuse_reply_attr($0, &value, timeout) }
                } catch {
                    reply.fail(error)
                }
            }
        }
        ops.readlink = { request, ino in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "readlink", logger: mount.logger)
            do {
                let target = try mount.fileSystem.readSymlink(mount.coreIno(ino))
                reply.answer { request in _ = target.withCString { fuse_reply_readlink(request, $0) } }
            } catch {
                reply.fail(error)
            }
        }
        ops.mknod = { request, parent, name, mode, device in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "mknod", logger: mount.logger, changing: mount.notifier)
            guard let name = FUSEOperations.newName(name!, reply) else { return }
            if let script = mount.replayScript(request!) {
                FUSEOperations.answerReplayedCreate(reply, mount, script, parent: mount.coreIno(parent), name: name)
                return
            }
            let kind: ItemKind?
            switch mode & S_IFMT {
            case S_IFIFO: kind = .fifo
            case S_IFSOCK: kind = .socket
            case S_IFCHR: kind = .characterDevice
            case S_IFBLK: kind = .blockDevice
            case S_IFREG: kind = .file
            default: kind = nil
            }
            FUSEOperations.replyEntry(reply, mount) {
                try mount.fileSystem.makeNode(
                    parent: mount.coreIno(parent), name: name, kind: kind, permissions: mode & 0o7777,
                    device: UInt64(device), context: mount.context(request!))
            }
        }
        ops.mkdir = { request, parent, name, mode in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "mkdir", logger: mount.logger, changing: mount.notifier)
            guard let name = FUSEOperations.newName(name!, reply) else { return }
            if let script = mount.replayScript(request!) {
                FUSEOperations.answerReplayedCreate(reply, mount, script, parent: mount.coreIno(parent), name: name)
                return
            }
            FUSEOperations.replyEntry(reply, mount) {
                try mount.fileSystem.makeDirectory(
                    parent: mount.coreIno(parent), name: name, permissions: mode & 0o7777,
                    context: mount.context(request!))
            }
        }
        ops.symlink = { request, target, parent, name in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "symlink", logger: mount.logger, changing: mount.notifier)
            guard let name = FUSEOperations.newName(name!, reply) else { return }
            if let script = mount.replayScript(request!) {
                FUSEOperations.answerReplayedCreate(reply, mount, script, parent: mount.coreIno(parent), name: name)
                return
            }
            guard let target = FUSEOperations.newName(target!, reply) else { return }
            FUSEOperations.replyEntry(reply, mount) {
                try mount.fileSystem.makeSymlink(
                    parent: mount.coreIno(parent), name: name, target: target, context: mount.context(request!))
            }
        }
        ops.unlink = { request, parent, name in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "unlink", logger: mount.logger, changing: mount.notifier)
            guard let name = FUSEOperations.existingName(name!, reply) else { return }
            if let script = mount.replayScript(request!) {
                FUSEOperations.answerReplayedRemoval(reply, script, parent: mount.coreIno(parent), name: name)
                return
            }
            do {
                try mount.fileSystem.unlink(
                    parent: mount.coreIno(parent), name: name, context: mount.context(request!))
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.rmdir = { request, parent, name in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "rmdir", logger: mount.logger, changing: mount.notifier)
            guard let name = FUSEOperations.existingName(name!, reply) else { return }
            if let script = mount.replayScript(request!) {
                FUSEOperations.answerReplayedRemoval(reply, script, parent: mount.coreIno(parent), name: name)
                return
            }
            do {
                try mount.fileSystem.removeDirectory(parent: mount.coreIno(parent), name: name)
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.rename = { request, parent, name, newParent, newName, flags in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "rename", logger: mount.logger, changing: mount.notifier)
            guard let name = FUSEOperations.existingName(name!, reply) else { return }
            if let script = mount.replayScript(request!) {
                FUSEOperations.answerReplayedRemoval(reply, script, parent: mount.coreIno(parent), name: name)
                return
            }
            guard let newName = FUSEOperations.newName(newName!, reply) else { return }
            do {
                try mount.fileSystem.rename(
                    parent: mount.coreIno(parent), name: name, newParent: mount.coreIno(newParent),
                    newName: newName, flags: RenameFlags(rawValue: flags), context: mount.context(request!))
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.link = { request, ino, newParent, newName in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "link", logger: mount.logger, changing: mount.notifier)
            if mount.replayScript(request!) != nil {
                reply.answer { fuse_reply_err($0, EPERM) }
                return
            }
            do {
                _ = try mount.fileSystem.link(
                    mount.coreIno(ino), newParent: mount.coreIno(newParent), newName: String(cString: newName!))
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.open = { request, ino, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "open", logger: mount.logger)
            if mount.replayScript(request!) != nil {
                FUSEOperations.answerReplayedOpen(reply, fileInfo!)
                return
            }
            let flags = fileInfo!.pointee.flags
            let context = mount.context(request!)
            let info = FileInfo(fileInfo!.pointee)
            do {
                if let opened = try mount.fileSystem.tryOpen(mount.coreIno(ino), flags: flags, context: context) {
                    var value = info.value(for: opened)
                    reply.answer { fuse_reply_open($0, &value) }
                    return
                }
            } catch {
                reply.fail(error)
                return
            }
            mount.interruptible(request!) { finish in
                do {
                    let opened = try await mount.fileSystem.open(mount.coreIno(ino), flags: flags, context: context)
                    var value = info.value(for: opened)
                    var answered = false
                    finish { reply.answer { answered = fuse_reply_open($0, &value) == 0 } }
                    if !answered { try? mount.fileSystem.release(opened.handle) }
                } catch {
                    finish { reply.fail(error) }
                }
            }
        }
        ops.create = { request, parent, name, mode, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "create", logger: mount.logger, changing: mount.notifier)
            if mount.replayScript(request!) != nil {
                reply.answer { fuse_reply_err($0, EPERM) }
                return
            }
            guard let name = FUSEOperations.newName(name!, reply) else { return }
            let info = FileInfo(fileInfo!.pointee)
            do {
                let (attributes, handle) = try mount.fileSystem.createFile(
                    parent: mount.coreIno(parent), name: name, permissions: mode & 0o7777,
                    flags: info.flags, context: mount.context(request!))
                var entry = mount.entry(attributes)
                var value = info.value(for: OpenedFile(handle: handle, cachePolicy: mount.fileSystem.cachePolicy(of: handle)))
                var answered = false
                reply.answer { answered = fuse_reply_create($0, &entry, &value) == 0 }
                if !answered { try? mount.fileSystem.release(handle) }
            } catch {
                reply.fail(error)
            }
        }
        ops.read = { request, _, size, offset, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "read", logger: mount.logger)
            do {
                let source = try mount.fileSystem.readSource(fileInfo!.pointee.fh, offset: Int64(offset), size: size)
                let available = max(0, min(Int64(size), source.size - Int64(offset)))
                if let pending = source.pending, available > 0 {
                    // Bytes of a placeholder still on their way: answered from a task once they are here.
                    mount.interruptible(request!) { finish in
                        do {
                            try await pending.waitUntilPresent(Int64(offset)..<Int64(offset) + available)
                            finish { reply.answer { _ = cfuse_reply_fd($0, source.fd, offset, Int(available)) } }
                        } catch {
                            finish { reply.fail(error) }
                        }
                    }
                    return
                }
                reply.answer { request in
                    if available == 0 {
                        _ = fuse_reply_buf(request, nil, 0)
                    } else {
                        _ = cfuse_reply_fd(request, source.fd, offset, Int(available))
                    }
                }
            } catch {
                reply.fail(error)
            }
        }
        ops.write = { request, _, buffer, size, offset, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "write", logger: mount.logger)
            do {
                let bytes = UnsafeRawBufferPointer(start: buffer, count: size)
                let written = try mount.fileSystem.write(fileInfo!.pointee.fh, offset: Int64(offset), bytes: bytes)
                reply.answer { _ = fuse_reply_write($0, written) }
            } catch {
                reply.fail(error)
            }
        }
        ops.flush = { request, _, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "flush", logger: mount.logger)
            if fileInfo!.pointee.fh == ReplayScript.handle {
                reply.succeed()
                return
            }
            do {
                try mount.fileSystem.flush(fileInfo!.pointee.fh, processID: mount.context(request!).processID)
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.release = { request, _, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "release", logger: mount.logger)
            if fileInfo!.pointee.fh == ReplayScript.handle {
                reply.succeed()
                return
            }
            do {
                try mount.fileSystem.release(fileInfo!.pointee.fh)
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.fsync = { request, _, _, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "fsync", logger: mount.logger)
            do {
                try mount.fileSystem.synchronize(fileInfo!.pointee.fh)
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.fallocate = { request, _, mode, offset, length, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "fallocate", logger: mount.logger)
            guard let change = FUSEOperations.spaceChange(mode) else {
                reply.answer { fuse_reply_err($0, EOPNOTSUPP) }
                return
            }
            do {
                try mount.fileSystem.changeSpace(
                    fileInfo!.pointee.fh, change, offset: Int64(offset), length: Int64(length))
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.lseek = { request, _, offset, whence, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "lseek", logger: mount.logger)
            // The kernel answers SEEK_SET, SEEK_CUR and SEEK_END itself.
            let target: SeekTarget
            switch whence {
            case 3: target = .data
            case 4: target = .hole
            default:
                reply.answer { fuse_reply_err($0, EINVAL) }
                return
            }
            do {
                let handle = fileInfo!.pointee.fh
                guard let found = try mount.fileSystem.seek(handle, to: target, from: Int64(offset)) else {
                    reply.answer { fuse_reply_err($0, ENXIO) }
                    return
                }
                reply.answer { _ = fuse_reply_lseek($0, off_t(found)) }
            } catch {
                reply.fail(error)
            }
        }
        ops.opendir = { request, ino, fileInfo in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "opendir", logger: mount.logger)
            let folder = mount.coreIno(ino)
            let info = FileInfo(fileInfo!.pointee)
            // The kernel may keep listings: it drops them itself when the folder changes through the mount, and
            // the notifier invalidates the folder when the remote changes it. Virtual folders change without
            // either, so they are listed afresh each time.
            let cacheable = !mount.fileSystem.isVirtualFolder(folder)
            if mount.fileSystem.needsListing(folder) {
                // A folder never listed: its children are listed from the provider first.
                Task {
                    do {
                        var value = info.directory(handle: try await mount.fileSystem.openDirectoryListing(folder),
                                                   cacheable: cacheable)
                        reply.answer { _ = fuse_reply_open($0, &value) }
                    } catch {
                        reply.fail(error)
                    }
                }
                return
            }
            do {
                var value = info.directory(handle: try mount.fileSystem.openDirectory(folder), cacheable: cacheable)
                reply.answer { _ = fuse_reply_open($0, &value) }
            } catch {
                reply.fail(error)
            }
        }
        ops.readdir = { request, _, size, offset, fileInfo in
            FUSEOperations.readDirectory(request!, size: size, offset: offset, handle: fileInfo!.pointee.fh, plus: false)
        }
        ops.readdirplus = { request, _, size, offset, fileInfo in
            FUSEOperations.readDirectory(request!, size: size, offset: offset, handle: fileInfo!.pointee.fh, plus: true)
        }
        ops.releasedir = { request, _, fileInfo in
            let mount = FUSEMount.from(request)
            mount.fileSystem.releaseDirectory(fileInfo!.pointee.fh)
            fuse_reply_err(request, 0)
        }
        ops.fsyncdir = { request, _, _, _ in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "fsyncdir", logger: mount.logger)
            do {
                try mount.fileSystem.synchronizeMetadata()
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.statfs = { request, _ in
            let mount = FUSEMount.from(request)
            let numbers = mount.fileSystem.statistics()
            var value = statvfs()
            value.f_bsize = UInt(numbers.blockSize)
            value.f_frsize = UInt(numbers.blockSize)
            value.f_blocks = UInt(numbers.totalBlocks)
            value.f_bfree = UInt(numbers.freeBlocks)
            value.f_bavail = UInt(numbers.availableBlocks)
            value.f_files = UInt(numbers.totalFiles)
            value.f_ffree = UInt(numbers.freeFiles)
            value.f_favail = UInt(numbers.freeFiles)
            value.f_namemax = UInt(numbers.maximumNameLength)
            fuse_reply_statfs(request, &value)
        }
        ops.setxattr = { request, ino, name, value, size, flags in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "setxattr", logger: mount.logger, changing: mount.notifier)
            guard let name = FUSEOperations.newName(name!, reply) else { return }
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            do {
                try mount.fileSystem.setExtendedAttribute(
                    mount.coreIno(ino), name: name, value: bytes,
                    mustCreate: flags & cfuse_xattr_create != 0,
                    mustReplace: flags & cfuse_xattr_replace != 0)
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        ops.getxattr = { request, ino, name, size in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "getxattr", logger: mount.logger)
            guard let name = FUSEOperations.name(name!, reply, orFail: { .noAttribute($0) }) else { return }
            do {
                let value = try mount.fileSystem.extendedAttribute(mount.coreIno(ino), name: name)
                FUSEOperations.replySized(reply, value, size: size)
            } catch {
                reply.fail(error)
            }
        }
        ops.listxattr = { request, ino, size in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "listxattr", logger: mount.logger)
            do {
                let names = try mount.fileSystem.extendedAttributeNames(mount.coreIno(ino))
                var bytes: [UInt8] = []
                for name in names {
                    bytes.append(contentsOf: name.utf8)
                    bytes.append(0)
                }
                FUSEOperations.replySized(reply, bytes, size: size)
            } catch {
                reply.fail(error)
            }
        }
        ops.removexattr = { request, ino, name in
            let mount = FUSEMount.from(request)
            let reply = Reply(request!, "removexattr", logger: mount.logger, changing: mount.notifier)
            guard let name = FUSEOperations.name(name!, reply, orFail: { .noAttribute($0) }) else { return }
            do {
                try mount.fileSystem.removeExtendedAttribute(mount.coreIno(ino), name: name)
                reply.succeed()
            } catch {
                reply.fail(error)
            }
        }
        return ops
    }

    /// Answers with the entry `body` creates or finds, or with its error.
    static func replyEntry(_ reply: Reply, _ mount: FUSEMount, _ body: () throws -> Attributes) {
        do {
            var entry = mount.entry(try body())
            reply.answer { fuse_reply_entry($0, &entry) }
        } catch {
            reply.fail(error)
        }
    }

    static func replySized(_ reply: Reply, _ bytes: [UInt8], size: Int) {
        if size == 0 {
            reply.answer { _ = fuse_reply_xattr($0, bytes.count) }
        } else if bytes.count > size {
            reply.fail(FolioError.range("attribute value of \(bytes.count) bytes"))
        } else {
            reply.answer { request in _ = bytes.withUnsafeBytes { fuse_reply_buf(request, $0.baseAddress, $0.count) } }
        }
    }

    static func readDirectory(_ request: fuse_req_t, size: Int, offset: Int, handle: UInt64, plus: Bool) {
        let mount = FUSEMount.from(request)
        let reply = Reply(request, plus ? "readdirplus" : "readdir", logger: mount.logger)
        var buffer = [CChar](repeating: 0, count: size)
        var used = 0
        var handedOut: [UInt64] = []
        do {
            try mount.fileSystem.readDirectory(handle, offset: offset, limit: size / (plus ? 136 : 32) + 1) { entry, next in
                let remaining = size - used
                let needed: Int = buffer.withUnsafeMutableBufferPointer { pointer in
                    entry.name.withCString { name in
                        if plus {
                            var param = mount.entry(entry.attributes)
                            if entry.name == "." || entry.name == ".." {
                                param = fuse_entry_param()
                                param.attr = entry.attributes.statValue
                            }
                            return fuse_add_direntry_plus(request, pointer.baseAddress! + used, remaining, name, &param, off_t(next))
                        } else {
                            var value = entry.attributes.statValue
                            return fuse_add_direntry(request, pointer.baseAddress! + used, remaining, name, &value, off_t(next))
                        }
                    }
                }
                if needed > remaining { return false }
                used += needed
                if plus && entry.name != "." && entry.name != ".." { handedOut.append(entry.attributes.ino) }
                return true
            }
            if !handedOut.isEmpty { mount.fileSystem.rememberLookups(handedOut) }
            reply.answer { request in _ = buffer.withUnsafeBufferPointer { fuse_reply_buf(request, $0.baseAddress, used) } }
        } catch {
            reply.fail(error)
        }
    }

    /// The space change a `fallocate` mode asks for; `nil` for modes Folio does not support (`EOPNOTSUPP`).
    static func spaceChange(_ mode: Int32) -> SpaceChange? {
        let keepSize: Int32 = 0x01, punchHole: Int32 = 0x02, zeroRange: Int32 = 0x10
        switch mode {
        case 0: return .allocate(keepSize: false)
        case keepSize: return .allocate(keepSize: true)
        case punchHole | keepSize: return .punchHole
        case zeroRange: return .zeroRange(keepSize: false)
        case zeroRange | keepSize: return .zeroRange(keepSize: true)
        default: return nil
        }
    }

    static func attributeChanges(_ attr: stat, toSet: Int32) -> AttributeChanges {
        var changes = AttributeChanges()
        if toSet & FUSE_SET_ATTR_MODE != 0 { changes.permissions = attr.st_mode & 0o7777 }
        if toSet & FUSE_SET_ATTR_UID != 0 { changes.uid = attr.st_uid }
        if toSet & FUSE_SET_ATTR_GID != 0 { changes.gid = attr.st_gid }
        if toSet & FUSE_SET_ATTR_SIZE != 0 { changes.size = Int64(attr.st_size) }
        if toSet & FUSE_SET_ATTR_ATIME_NOW != 0 {
            changes.accessTime = .now()
        } else if toSet & FUSE_SET_ATTR_ATIME != 0 {
            changes.accessTime = Timestamp(attr.st_atim)
        }
        if toSet & FUSE_SET_ATTR_MTIME_NOW != 0 {
            changes.modificationTime = .now()
        } else if toSet & FUSE_SET_ATTR_MTIME != 0 {
            changes.modificationTime = Timestamp(attr.st_mtim)
        }
        return changes
    }
}

/// A copy of `fuse_file_info` that outlives the callback, for a deferred `fuse_reply_open` (of a file or a
/// folder).
struct FileInfo: @unchecked Sendable {
    private let raw: fuse_file_info

    init(_ raw: fuse_file_info) { self.raw = raw }

    var flags: Int32 { raw.flags }

    /// The answer to an `opendir` with the listing `handle`.
    func directory(handle: UInt64, cacheable: Bool) -> fuse_file_info {
        var info = raw
        info.fh = handle
        info.cache_readdir = cacheable ? 1 : 0
        info.keep_cache = cacheable ? 1 : 0
        return info
    }

    func value(for opened: OpenedFile) -> fuse_file_info {
        var info = raw
        info.fh = opened.handle
        info.noflush = opened.isReadOnly ? 1 : 0
        switch opened.cachePolicy {
        case .keepCache:
            info.keep_cache = 1
            info.direct_io = 0
        case .freshCache:
            info.keep_cache = 0
            info.direct_io = 0
        case .directIO:
            info.keep_cache = 0
            info.direct_io = 1
        }
        return info
    }
}
