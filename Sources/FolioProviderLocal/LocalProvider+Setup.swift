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
        if manifest?.entry(for: .drive) == nil || manifest?.remoteID == nil {
            var updated = manifest ?? RemoteManifest()
            updated.upsert(.drive)
            updated.remoteID = updated.remoteID ?? UUID().uuidString
            try updated.save(to: layout.manifest)
            manifest = updated
        }
        try SystemCalls.makeDirectories(layout.directory(of: .drive))
    }

    /// Whether `root` is a local remote (has a manifest).
    public static func isRemote(at root: FilePath) -> Bool {
        ((try? RemoteManifest.load(from: RemoteLayout(root: root).manifest)) ?? nil) != nil
    }

    /// The identity of the remote at `root` (from its manifest), or `nil` if it is not a remote or is one from
    /// before identities.
    public static func remoteID(at root: FilePath) -> String? {
        ((try? RemoteManifest.load(from: RemoteLayout(root: root).manifest)) ?? nil)?.remoteID
    }

    /// The identity of the remote, recorded in its manifest: made now for a remote from before identities.
    static func establishIdentity(of layout: RemoteLayout) throws -> String {
        guard var manifest = try RemoteManifest.load(from: layout.manifest) else {
            throw FolioError.invalidArgument(
                "\(layout.root) is not a Folio remote (no .folio-remote.json): make it one with "
                    + "LocalProvider.initialize(at:)")
        }
        if let remoteID = manifest.remoteID { return remoteID }
        manifest.remoteID = UUID().uuidString
        try manifest.save(to: layout.manifest)
        // Another provider may have done the same at the same moment: the one saved last is the identity.
        guard let remoteID = try RemoteManifest.load(from: layout.manifest)?.remoteID else {
            throw FolioError.io("cannot record the identity of the remote \(layout.root)")
        }
        return remoteID
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
