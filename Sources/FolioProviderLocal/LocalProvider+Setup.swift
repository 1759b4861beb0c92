import FolioCore
import Foundation
import SystemPackage

extension LocalProvider {
    /// Makes `root` a local remote holding the Drive container: creates the directory if needed, writes the
    /// manifest, the provider's state directory and `com.folio.drive/`. Running it again on a remote is
    /// harmless (a missing Drive is added back), also from several processes at once (the manifest is changed
    /// under the remote's lock). A non-empty directory that is not a remote (it holds more than `.folio`) is
    /// refused with `.invalidArgument` (``adopt(at:)`` makes it one as it is), and a file system without user
    /// xattrs with `.notSupported`. An adopted folder is a remote already: nothing is done.
    public static func initialize(at root: FilePath) throws {
        if RemoteLayout.existing(at: root).isAdopted { return }
        let layout = RemoteLayout(root: root)
        if let status = try SystemCalls.statusIfPresent(root) {
            guard status.kind == .directory else { throw FolioError.notDirectory("\(root) is not a directory") }
            try refuseForeignFolder(layout)
        } else {
            try SystemCalls.makeDirectories(root)
        }
        try SystemCalls.makeDirectories(layout.staging)
        try checkExtendedAttributes(in: layout.stateDirectory)
        // Read again under the lock: another process may be making the same folder a remote at this moment.
        try RemoteLock(layout: layout).withExclusiveLock {
            try refuseForeignFolder(layout)
            let manifest = try RemoteManifest.load(from: layout.manifest)
            if manifest?.entry(for: .drive) == nil || manifest?.remoteID == nil {
                var updated = manifest ?? RemoteManifest()
                if updated.entry(for: .drive) == nil { updated.upsert(.drive) }
                updated.remoteID = updated.remoteID ?? UUID().uuidString
                try updated.save(to: layout.manifest)
            }
        }
        try SystemCalls.makeDirectories(layout.directory(of: .drive))
    }

    /// Refuses (`.invalidArgument`) a folder that holds something and is not a remote: one without a manifest
    /// holding more than the remote's own names (`.folio`, and `.folio-…`: a remote another process is making).
    private static func refuseForeignFolder(_ layout: RemoteLayout) throws {
        guard try RemoteManifest.load(from: layout.manifest) == nil else { return }
        let foreign = try SystemCalls.directoryEntries(layout.root).filter {
            $0 != ".folio" && !ItemName.isInternal($0)
        }
        if !foreign.isEmpty {
            throw FolioError.invalidArgument(
                "\(layout.root) is not empty and is not a Folio remote (no .folio-remote.json): "
                    + "use a new or empty directory, or adopt it as it is"
            )
        }
    }

    /// Whether `root` is a local remote (has a manifest): one Folio made or an adopted folder.
    public static func isRemote(at root: FilePath) -> Bool {
        ((try? RemoteManifest.load(from: RemoteLayout.existing(at: root).manifest)) ?? nil) != nil
    }

    /// The identity of the remote at `root` (from its manifest), or `nil` if it is not a remote or is one from
    /// before identities.
    public static func remoteID(at root: FilePath) -> String? {
        ((try? RemoteManifest.load(from: RemoteLayout.existing(at: root).manifest)) ?? nil)?.remoteID
    }

    /// The identity of the remote, recorded in its manifest: made now for a remote from before identities.
    static func establishIdentity(of layout: RemoteLayout) throws -> String {
        guard let manifest = try RemoteManifest.load(from: layout.manifest) else {
            throw FolioError.invalidArgument(
                "\(layout.root) is not a Folio remote (no .folio-remote.json): make it one with "
                    + "LocalProvider.initialize(at:)")
        }
        if let remoteID = manifest.remoteID { return remoteID }
        // Made under the lock and read again there: another process may be making it at this moment, and
        // all must end with the one recorded.
        try SystemCalls.makeDirectories(layout.stateDirectory)
        return try RemoteLock(layout: layout).withExclusiveLock {
            guard var manifest = try RemoteManifest.load(from: layout.manifest) else {
                throw FolioError.offline("the manifest of the remote \(layout.root) is gone")
            }
            if let remoteID = manifest.remoteID { return remoteID }
            let remoteID = UUID().uuidString
            manifest.remoteID = remoteID
            try manifest.save(to: layout.manifest)
            return remoteID
        }
    }

    /// Adds a container to the remote at `root` (or updates its display name and visibility): records it in
    /// the manifest and creates its directory. `.invalidArgument` if `root` is not a remote or the id cannot
    /// name a directory.
    /// With `keepingExisting`, a container the manifest already has is left as it is (``createContainer(_:)``).
    public static func addContainer(_ container: Container, at root: FilePath, keepingExisting: Bool = false) throws {
        try ItemName.validateContainerID(container.id)
        let layout = RemoteLayout.existing(at: root)
        guard try RemoteManifest.load(from: layout.manifest) != nil else {
            throw FolioError.invalidArgument("\(root) is not a Folio remote: initialize it first")
        }
        // Read again under the lock, so an entry another process adds at this moment is kept.
        try SystemCalls.makeDirectories(layout.stateDirectory)
        try RemoteLock(layout: layout).withExclusiveLock {
            guard var manifest = try RemoteManifest.load(from: layout.manifest) else {
                throw FolioError.invalidArgument("\(root) is not a Folio remote: initialize it first")
            }
            if keepingExisting, manifest.entry(for: container.id) != nil { return }
            if manifest.entry(for: container.id) != RemoteManifest.Entry(container) {
                manifest.upsert(container)
                try manifest.save(to: layout.manifest)
            }
        }
        try SystemCalls.makeDirectories(layout.directory(of: container.id))
    }

    /// The containers of a remote: one per visible top-level directory, Drive first, then by id (in an adopted
    /// folder: the Drive, which is the folder itself, and one per folder of `.folio/containers/`).
    static func containers(of layout: RemoteLayout) throws -> [Container] {
        let manifest = try RemoteManifest.load(from: layout.manifest) ?? RemoteManifest()
        var containers: [Container] = []
        var folder = layout.root
        if layout.isAdopted {
            containers.append(manifest.entry(for: .drive)?.container ?? .drive)
            folder = layout.adoptedContainers
            if try SystemCalls.statusIfPresent(folder) == nil { return containers }
        }
        for name in try SystemCalls.directoryEntries(folder) where !name.hasPrefix(".") {
            guard try SystemCalls.statusIfPresent(folder.appending(name))?.kind == .directory else { continue }
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
