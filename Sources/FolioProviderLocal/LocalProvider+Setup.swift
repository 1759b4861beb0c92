import FolioCore
import Foundation
import SystemPackage

extension LocalProvider {
    /// Makes `root` a local remote holding the Drive container: creates the directory if needed, writes the
    /// manifest, the provider's state directory and `com.folio.drive/`. Running it again on a remote is
    /// harmless (a missing Drive is added back). A non-empty directory that is not a remote is refused with
    /// `.invalidArgument`, and a file system without user xattrs with `.notSupported`.
    public static func initialize(at root: FilePath) throws {
        let layout = RemoteLayout(root: root)
        var manifest = try RemoteManifest.load(from: layout.manifest)
        if let status = try SystemCalls.statusIfPresent(root) {
            guard status.kind == .directory else { throw FolioError.notDirectory("\(root) is not a directory") }
            if manifest == nil, !(try SystemCalls.directoryEntries(root)).isEmpty {
                throw FolioError.invalidArgument(
                    "\(root) is not empty and is not a Folio remote (no .folio-remote.json): "
                        + "use a new or empty directory"
                )
            }
        } else {
            try SystemCalls.makeDirectories(root)
        }
        try SystemCalls.makeDirectories(layout.staging)
        try checkExtendedAttributes(in: layout.stateDirectory)
        if manifest?.entry(for: .drive) == nil {
            var updated = manifest ?? RemoteManifest()
            updated.upsert(.drive)
            try updated.save(to: layout.manifest)
            manifest = updated
        }
        try SystemCalls.makeDirectories(layout.directory(of: .drive))
    }

    /// Whether `root` is a local remote (has a manifest).
    public static func isRemote(at root: FilePath) -> Bool {
        ((try? RemoteManifest.load(from: RemoteLayout(root: root).manifest)) ?? nil) != nil
    }

    /// Adds a container to the remote at `root` (or updates its display name and visibility): records it in
    /// the manifest and creates its directory. `.invalidArgument` if `root` is not a remote or the id cannot
    /// name a directory.
    public static func addContainer(_ container: Container, at root: FilePath) throws {
        try ItemName.validateContainerID(container.id)
        let layout = RemoteLayout(root: root)
        guard var manifest = try RemoteManifest.load(from: layout.manifest) else {
            throw FolioError.invalidArgument("\(root) is not a Folio remote: initialize it first")
        }
        if manifest.entry(for: container.id) != RemoteManifest.Entry(container) {
            manifest.upsert(container)
            try manifest.save(to: layout.manifest)
        }
        try SystemCalls.makeDirectories(layout.directory(of: container.id))
    }

    /// The containers of a remote: one per visible top-level directory, Drive first, then by id.
    static func containers(of layout: RemoteLayout) throws -> [Container] {
        let manifest = try RemoteManifest.load(from: layout.manifest) ?? RemoteManifest()
        var containers: [Container] = []
        for name in try SystemCalls.directoryEntries(layout.root) where !name.hasPrefix(".") {
            guard try SystemCalls.statusIfPresent(layout.root.appending(name))?.kind == .directory else { continue }
            let id = ContainerID(name)
            let unlisted = Container(id: id, displayName: name, isPublic: true)
            containers.append(manifest.entry(for: id)?.container ?? unlisted)
        }
        return containers.sorted { lhs, rhs in
            if (lhs.id == .drive) != (rhs.id == .drive) { return lhs.id == .drive }
            return lhs.id < rhs.id
        }
    }

    /// Fails with `.notSupported` if the file system of `directory` cannot keep user xattrs (item ids live there).
    private static func checkExtendedAttributes(in directory: FilePath) throws {
        let probe = "user.folio.probe"
        do {
            try SystemCalls.setExtendedAttribute(probe, "1", of: directory)
            try SystemCalls.removeExtendedAttribute(probe, of: directory)
        } catch {
            throw FolioError.notSupported(
                "the file system of \(directory) cannot keep user extended attributes, where item ids live (\(error))"
            )
        }
    }
}
