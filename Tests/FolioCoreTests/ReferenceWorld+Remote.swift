import FolioCore
import FolioTesting

/// Another device's operations, straight on the remote: it sees the remote as it is, so what it replaces or
/// removes is what it saw.
extension ReferenceWorld {
    /// The remote's folders by path, the root (`""`, id `nil`) first.
    private func remoteFolders(_ tree: [String: RemoteItem]) -> [(path: String, id: ItemID?)] {
        var folders: [(path: String, id: ItemID?)] = [("", nil)]
        for (path, item) in tree.sorted(by: { $0.key < $1.key }) where item.kind == .directory {
            folders.append((path, item.id))
        }
        return folders
    }

    /// Writes a file: new content for the file at that name, or a new file.
    func remoteWrite(folder pick: UInt32, name: Int, length: Int) throws {
        let tree = remoteTree()
        guard let folder = ReferenceOperation.choose(remoteFolders(tree), pick) else { return }
        let path = Self.join(folder.path, ReferenceOperation.names[name])
        let content = "R\(step)-" + String(repeating: "y", count: length)
        if let existing = tree[path] {
            guard existing.kind == .file else { return }
            note("remote: write /\(path) = \(Self.tag(content))")
            kill(provider.content(of: existing.id).map { String(decoding: $0, as: UTF8.self) })
            try provider.modify(
                existing.id, in: .drive, baseVersion: existing.version,
                changes: RemoteItemChanges(modificationTime: .now()), bytes: Array(content.utf8))
        } else {
            if avoidsAdding(to: folder.id) { return }
            note("remote: create /\(path) = \(Self.tag(content))")
            try provider.create(
                RemoteItemTemplate(
                    id: .generate(), container: .drive, parentID: folder.id, name: ReferenceOperation.names[name],
                    kind: .file, modificationTime: .now(), mode: 0o644),
                bytes: Array(content.utf8))
        }
        alive.insert(content)
    }

    /// Makes a folder.
    func remoteMakeFolder(folder pick: UInt32, name: Int) throws {
        let tree = remoteTree()
        guard let folder = ReferenceOperation.choose(remoteFolders(tree), pick) else { return }
        let path = Self.join(folder.path, ReferenceOperation.names[name])
        guard tree[path] == nil, !avoidsAdding(to: folder.id) else { return }
        note("remote: mkdir /\(path)")
        try provider.create(
            RemoteItemTemplate(
                id: .generate(), container: .drive, parentID: folder.id, name: ReferenceOperation.names[name],
                kind: .directory, modificationTime: .now(), mode: 0o755),
            bytes: nil)
    }

    /// Renames or moves an item, where the name is free (the remote refuses otherwise).
    func remoteRename(item pick: UInt32, folder folderPick: UInt32, name: Int) throws {
        let tree = remoteTree()
        guard let (source, item) = ReferenceOperation.choose(tree.sorted { $0.key < $1.key }, pick),
              let folder = ReferenceOperation.choose(remoteFolders(tree), folderPick) else { return }
        let target = Self.join(folder.path, ReferenceOperation.names[name])
        guard tree[target] == nil, !target.hasPrefix(source + "/"), !avoidsAdding(to: folder.id),
              item.kind != .directory
                || !avoidsMoving(into: folder.id) && !avoidsCycle(moving: item.id, into: folder.id) else { return }
        note("remote: rename /\(source) → /\(target)")
        try provider.modify(
            item.id, in: .drive, baseVersion: item.version,
            changes: RemoteItemChanges(parentID: .some(folder.id), name: ReferenceOperation.names[name]), bytes: nil)
    }

    /// Deletes a file, or an empty folder.
    func remoteDelete(item pick: UInt32) throws {
        let tree = remoteTree()
        guard let (path, item) = ReferenceOperation.choose(tree.sorted { $0.key < $1.key }, pick) else { return }
        if item.kind == .directory, tree.keys.contains(where: { $0.hasPrefix(path + "/") }) { return }
        if item.kind == .directory, avoidsDeleting(item.id) { return }
        note("remote: delete /\(path)")
        kill(provider.content(of: item.id).map { String(decoding: $0, as: UTF8.self) })
        try provider.delete(item.id, in: .drive, baseVersion: item.version)
    }

    // MARK: Known defects

    /// Whether adding to the remote folder `folder` would show ``ReferenceDefect/folderRemovedWhileFilledElsewhere``
    /// (this device removed it) while that defect is avoided.
    private func avoidsAdding(to folder: ItemID?) -> Bool {
        guard avoiding.contains(.folderRemovedWhileFilledElsewhere), let folder else { return false }
        return removedFolders.contains(folder)
    }

    /// Whether moving a folder into the remote folder `folder` would show
    /// ``ReferenceDefect/folderMovedIntoUnlistedFolder`` (this device has not listed `folder`) while that defect is
    /// avoided.
    private func avoidsMoving(into folder: ItemID?) -> Bool {
        guard avoiding.contains(.folderMovedIntoUnlistedFolder), let folder else { return false }
        guard let ino = fileSystem.ino(of: folder), let node = fileSystem.node(ino) else { return true }
        return !node.childrenListed
    }

    /// Whether moving the remote folder `moved` into the remote folder `folder` would show
    /// ``ReferenceDefect/moveCycle`` (this device has `folder` below `moved`) while that defect is avoided.
    private func avoidsCycle(moving moved: ItemID, into folder: ItemID?) -> Bool {
        guard avoiding.contains(.moveCycle), let folder, let movedIno = fileSystem.ino(of: moved),
              var current = fileSystem.ino(of: folder) else { return false }
        while current != FolioFileSystem.rootIno, let node = fileSystem.node(current) {
            if current == movedIno { return true }
            current = node.parent
        }
        return false
    }

    /// Whether deleting the remote folder `folder` would show ``ReferenceDefect/changeInFolderDeletedElsewhere``
    /// (something below it here waits for upload, or the folder's own create is not answered yet, so this device
    /// would take it for a folder the remote never had) while that defect is avoided.
    private func avoidsDeleting(_ folder: ItemID) -> Bool {
        guard avoiding.contains(.changeInFolderDeletedElsewhere), let ino = fileSystem.ino(of: folder),
              let observed = try? observe(), let path = observed.paths[ino] else { return false }
        return observed.nodes.contains { entry in
            (entry.key == path || entry.key.hasPrefix(path + "/"))
                && (entry.value.needsCreate || entry.value.metadataDirty || entry.value.state.hasPendingLocalVersion)
        }
    }
}
