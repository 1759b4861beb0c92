import FolioCore

/// Handlers of folder listings: opendir, readdir, readdirplus, releasedir, fsyncdir.
extension FUSEHandlers {
    /// `opendir`. The kernel may keep listings: it drops them itself when the folder changes through the mount,
    /// and the notifier invalidates the folder when the remote changes it. Virtual folders change without either,
    /// so they are listed afresh each time. A folder never listed is listed from the provider first, from a task.
    func openDirectory(_ request: FUSERequest.Open, _ reply: Reply) {
        let folder = request.ino
        let cacheable = !fileSystem.isVirtualFolder(folder)
        guard fileSystem.needsListing(folder) else {
            do {
                reply.openedDirectory(try fileSystem.openDirectory(folder), cacheable: cacheable, info: request.info)
            } catch {
                reply.fail(error)
            }
            return
        }
        Task {
            do {
                let handle = try await fileSystem.openDirectoryListing(folder)
                reply.openedDirectory(handle, cacheable: cacheable, info: request.info)
            } catch {
                reply.fail(error)
            }
        }
    }

    /// `readdir` and `readdirplus`: as many entries as fit. Every `readdirplus` entry but `.` and `..` counts as a
    /// lookup in the kernel, so the core remembers it.
    func readDirectory(_ request: FUSERequest.ReadDirectory, _ reply: Reply) {
        var listing = DirectoryBuffer(for: reply, size: request.size, plus: request.plus)
        do {
            try fileSystem.readDirectory(request.handle, offset: request.offset, limit: listing.capacity) {
                entry, next in listing.add(entry, next: next)
            }
            if !listing.handedOut.isEmpty { fileSystem.rememberLookups(listing.handedOut) }
            reply.listing(listing)
        } catch {
            reply.fail(error)
        }
    }

    /// `releasedir`.
    func releaseDirectory(_ handle: UInt64, _ reply: Reply) {
        fileSystem.releaseDirectory(handle)
        reply.succeed()
    }

    /// `fsyncdir`: the metadata store is made durable.
    func synchronizeDirectory(_ reply: Reply) {
        reply.succeed { try fileSystem.synchronizeMetadata() }
    }
}
