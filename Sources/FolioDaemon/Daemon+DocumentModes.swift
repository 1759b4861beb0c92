import FolioCore
import Foundation

/// The document picker's import and move modes (`folio import`, `folio move`); open is `folio grant`, export is
/// the CLI's own copy out of the mount (`folio export`).
extension Daemon {
    /// Answers `import` (`path`: an absolute path on this machine, `app`: the container, `target`: the name) and
    /// `move` (`path` and `target`: paths relative to the root of `view`); `nil` for any other command.
    func handleDocumentModeCommand(
        _ request: ControlRequest, fileSystem: FolioFileSystem, view: NamespaceView
    ) -> ControlResponse? {
        guard ["import", "move"].contains(request.command) else { return nil }
        var response = ControlResponse(ok: true)
        do throws(FolioError) {
            if request.command == "import" {
                guard let source = request.path, source.hasPrefix("/"), let app = request.app else {
                    throw .invalidArgument("import needs an absolute source path and an app container id")
                }
                let name = request.target ?? (source as NSString).lastPathComponent
                try ensureContainer(
                    Container(id: ContainerID(app), displayName: app, isPublic: false), fileSystem: fileSystem)
                let folder = try fileSystem.rootIno(of: .app(ContainerID(app)))
                let size = try importDocument(from: source, into: folder, name: name, fileSystem: fileSystem)
                response.message = "imported \(source) into \(app) as \(name) (\(Wording.count(Int(size), "byte"))), "
                    + "a new document of its own; it is being uploaded"
            } else {
                guard let path = request.path, let destination = request.target else {
                    throw .invalidArgument("move needs a document and a destination folder")
                }
                response.message = try moveDocument(path, to: destination, fileSystem: fileSystem, view: view)
            }
        } catch {
            return ControlResponse(ok: false, error: "\(error)")
        }
        return response
    }

    /// Copies the regular file at `source` into `folder` as a new document `name` (its bytes, mode, modification
    /// time and tags), committed at once: an upload like any new file's. Returns its size.
    private func importDocument(
        from source: String, into folder: UInt64, name: String, fileSystem: FolioFileSystem
    ) throws(FolioError) -> Int64 {
        let fd = open(source, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(.init(rawValue: errno), "open \(source)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .system(.init(rawValue: errno), "stat \(source)") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .invalidArgument("only documents (regular files) can be imported; \(source) is not one")
        }
        let tags = FileTags.read(fd)
        let context = RequestContext(uid: getuid(), gid: getgid(), processID: getpid())
        let (attributes, handle) = try fileSystem.createFile(
            parent: folder, name: name, permissions: UInt32(info.st_mode & 0o777), flags: O_WRONLY,
            context: context)
        var copied: Int64 = 0
        do throws(FolioError) {
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { throw .system(.init(rawValue: errno), "read \(source)") }
                if count == 0 { break }
                let written: Int
                do {
                    written = try buffer.withUnsafeBytes { bytes in
                        try fileSystem.write(handle, offset: copied, bytes: UnsafeRawBufferPointer(rebasing: bytes[..<count]))
                    }
                } catch {
                    throw FolioError(error)
                }
                copied += Int64(written)
            }
            try fileSystem.flush(handle, processID: context.processID)
            try fileSystem.release(handle)
        } catch {
            try? fileSystem.release(handle)
            try? fileSystem.unlink(parent: folder, name: name)
            throw error
        }
        let modified = Timestamp(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec))
        _ = try blockOn { () async -> Result<Attributes, FolioError> in
            do throws(FolioError) {
                return .success(try await fileSystem.setAttributes(
                    attributes.ino, AttributeChanges(modificationTime: modified), handle: nil, context: context))
            } catch {
                return .failure(error)
            }
        }.get()
        if let tags {
            try fileSystem.setExtendedAttribute(
                attributes.ino, name: VirtualFolder.tagsAttribute, value: tags, mustCreate: false, mustReplace: false)
        }
        return copied
    }

    /// Moves the document at `path` into the folder `destination` (of another container) and leaves an external
    /// reference to it at its old place, so the app it came from keeps opening it in place.
    private func moveDocument(
        _ path: String, to destination: String, fileSystem: FolioFileSystem, view: NamespaceView
    ) throws(FolioError) -> String {
        let ino = try resolveListing(path, fileSystem: fileSystem, view: view)
        let folder = try resolveListing(destination, fileSystem: fileSystem, view: view)
        guard let document = fileSystem.node(ino), let target = fileSystem.node(folder) else {
            throw .notFound(path)
        }
        guard document.kind == .file else {
            throw .invalidArgument("only documents can be moved with a reference left behind; \(path) is a "
                + document.kind.rawValue)
        }
        guard target.kind == .directory else { throw .notDirectory(destination) }
        guard document.container != target.container else {
            throw .invalidArgument("\(destination) is in the same container as \(path): a move there needs no "
                + "reference (use mv)")
        }
        guard let place = fileSystem.identity(of: ino), let folderID = place.folder,
              let oldParent = fileSystem.ino(of: folderID) else { throw .notFound(path) }
        try fileSystem.rename(
            parent: oldParent, name: place.name, newParent: folder, newName: place.name, flags: .noReplace)
        do throws(FolioError) {
            try fileSystem.addReference(to: ino, parent: oldParent, name: place.name)
        } catch {
            throw .io("moved \(path) to \(destination), but the reference at its old place could not be made: \(error)")
        }
        let shown = destination.isEmpty ? "/" : destination
        return "moved \(path) to \(shown)/\(place.name) (container \(target.container)); a reference at \(path) "
            + "opens it in place"
    }
}
