import FolioCore
import FolioTesting
import Foundation

/// This device's operations, through the core, as one process (100) makes them: the model predicts each.
extension ReferenceWorld {
    /// Writes a whole file: a new content, replacing what the file had.
    func write(folder pick: UInt32, name: Int, length: Int) async throws {
        guard let folder = ReferenceOperation.choose(localFolders, pick) else { return }
        let path = Self.join(folder, ReferenceOperation.names[name])
        if model[path] == .directory || avoidsChange(in: folder) { return }
        let content = "L\(step)-" + String(repeating: "x", count: length)
        note("write /\(path) = \(Self.tag(content))")
        do {
            try await core.write(path, content)
        } catch {
            throw failure("write", "write of /\(path) failed: \(error)")
        }
        if case .file(let old)? = model[path] { kill(old) }
        alive.insert(content)
        model[path] = .file(content)
        stepWasDurable = true  // a commit
    }

    /// Appends to a file (a placeholder is downloaded first; that may fail if the remote has moved on).
    func append(file pick: UInt32) async throws {
        guard let path = ReferenceOperation.choose(localFiles, pick), case .file(let old)? = model[path],
              !avoidsChange(in: Self.parent(path)) else { return }
        let suffix = "+A\(step)"
        note("append to /\(path)")
        do {
            try await core.append(path, suffix)
        } catch {
            try expectDownloadMayFail(path, error, "append")
            return
        }
        kill(old)
        alive.insert(old + suffix)
        model[path] = .file(old + suffix)
        stepWasDurable = true
    }

    /// Makes a folder.
    func makeFolder(folder pick: UInt32, name: Int) throws {
        guard let folder = ReferenceOperation.choose(localFolders, pick) else { return }
        let path = Self.join(folder, ReferenceOperation.names[name])
        guard model[path] == nil, !avoidsChange(in: folder) else { return }
        note("mkdir /\(path)")
        do {
            _ = try fileSystem.makeDirectory(
                parent: try core.ino(folder), name: ReferenceOperation.names[name], permissions: 0o755,
                context: CoreHarness.context())
        } catch {
            throw failure("mkdir", "mkdir of /\(path) failed: \(error)")
        }
        model[path] = .directory
    }

    /// Renames a file or folder; POSIX says when it is refused.
    func rename(item pick: UInt32, folder folderPick: UInt32, name: Int) throws {
        let items = localFiles + localFolders.filter { !$0.isEmpty }
        guard let source = ReferenceOperation.choose(items.sorted(), pick),
              let folder = ReferenceOperation.choose(localFolders, folderPick) else { return }
        let target = Self.join(folder, ReferenceOperation.names[name])
        let intoItself = target == source || target.hasPrefix(source + "/")
        let sourceIsFolder = model[source] == .directory
        let targetEntry = model[target]
        let targetIsEmptyFolder = targetEntry == .directory && !model.keys.contains { $0.hasPrefix(target + "/") }
        let allowed = target == source || !intoItself && (targetEntry == nil
            || (!sourceIsFolder && targetEntry != .directory)
            || (sourceIsFolder && targetIsEmptyFolder))
        if avoidsChange(in: folder) || allowed && targetEntry == .directory && avoidsRemoving(target)
            || avoidsCycle(moving: source, into: folder)
            || targetEntry != nil && avoidsReplacing(with: source) { return }
        let replacedFolder = targetEntry == .directory ? (try? core.ino(target)).flatMap(fileSystem.node)?.itemID : nil
        note("rename /\(source) → /\(target) (expect \(allowed ? "done" : "refused"))")
        do {
            try fileSystem.rename(
                parent: try core.ino(Self.parent(source)),
                name: Self.name(source), newParent: try core.ino(folder), newName: ReferenceOperation.names[name],
                flags: [], context: CoreHarness.context())
        } catch {
            if allowed && source != target {
                throw failure("rename", "rename /\(source) → /\(target) failed: \(error)")
            }
            return
        }
        guard allowed else { throw failure("rename", "rename /\(source) → /\(target) should have been refused") }
        guard source != target else { return }
        if case .file(let replaced)? = targetEntry { kill(replaced) }
        if let replacedFolder { removedFolders.insert(replacedFolder) }
        var moved: [String: ReferenceEntry] = [:]
        for (key, value) in model where key == source || key.hasPrefix(source + "/") {
            moved[target + key.dropFirst(source.count)] = value
            model[key] = nil
        }
        model.merge(moved) { $1 }
    }

    /// Removes a file.
    func unlink(file pick: UInt32) throws {
        guard let path = ReferenceOperation.choose(localFiles, pick) else { return }
        // (A document removed goes with its conflict versions: the user removed it knowing it was conflicted.)
        let ino = try core.ino(path)
        let versions = try fileSystem.versions(of: ino).filter { !$0.isCurrent }.map {
            try read(version: $0.id, of: ino)
        }
        note("unlink /\(path)")
        do {
            try fileSystem.unlink(
                parent: try core.ino(Self.parent(path)), name: Self.name(path), context: CoreHarness.context())
        } catch {
            throw failure("unlink", "unlink of /\(path) failed: \(error)")
        }
        if case .file(let content)? = model[path] { kill(content) }
        versions.forEach(kill)
        model[path] = nil
    }

    /// Removes a folder: refused with `ENOTEMPTY` unless it is empty.
    func removeFolder(folder pick: UInt32) throws {
        guard let path = ReferenceOperation.choose(localFolders.filter { !$0.isEmpty }, pick),
              !avoidsRemoving(path) else { return }
        let removed = (try? core.ino(path)).flatMap(fileSystem.node)?.itemID
        let empty = !model.keys.contains { $0.hasPrefix(path + "/") }
        note("rmdir /\(path) (expect \(empty ? "done" : "ENOTEMPTY"))")
        do {
            try fileSystem.removeDirectory(parent: try core.ino(Self.parent(path)), name: Self.name(path))
        } catch let error as FolioError {
            guard !empty, error.errno == .directoryNotEmpty else {
                throw failure("rmdir", "rmdir of /\(path) failed: \(error)")
            }
            return
        }
        guard empty else { throw failure("rmdir", "rmdir of the non-empty /\(path) succeeded") }
        model[path] = nil
        if let removed { removedFolders.insert(removed) }
    }

    /// Reads a file: what the model says it holds (a placeholder's download may fail if the remote moved on).
    func read(file pick: UInt32) async throws {
        guard let path = ReferenceOperation.choose(localFiles, pick), case .file(let expected)? = model[path] else {
            return
        }
        note("read /\(path)")
        let actual: String
        do {
            actual = try await readThroughCore(path)
        } catch {
            try expectDownloadMayFail(path, error, "read")
            return
        }
        guard actual == expected else {
            throw failure("read", "/\(path) reads \(Self.tag(actual)), expected \(Self.tag(expected))")
        }
    }

    /// Evicts a file (refused unless it is a clean download: nothing changes then).
    func evict(file pick: UInt32) throws {
        guard let path = ReferenceOperation.choose(localFiles, pick) else { return }
        let report = try? fileSystem.evict(try core.ino(path))
        note("evict /\(path): \(report.map { "\($0.evicted) evicted" } ?? "refused")")
    }

    /// Resolves a conflict as the user chooses: keep this device's version, the remote's, or both.
    func resolve(item pick: UInt32, keep: ConflictResolution) throws {
        let conflicted = try localFiles.filter { path in try fileSystem.versions(of: try core.ino(path)).count > 1 }
        guard let path = ReferenceOperation.choose(conflicted, pick), case .file(let current)? = model[path] else {
            return
        }
        let ino = try core.ino(path)
        let versions = try fileSystem.versions(of: ino).filter { !$0.isCurrent }
        let kept = try versions.map { try read(version: $0.id, of: ino) }
        note("resolve /\(path) keeping \(keep): current \(Self.tag(current)), conflict versions "
            + kept.map(Self.tag).joined(separator: ", "))
        do {
            try fileSystem.resolveConflict(ino, keep: keep)
        } catch {
            throw failure("resolve", "resolving /\(path) failed: \(error)")
        }
        let after = try observe()
        let left = after.entries[path]?.description ?? "nothing"
        switch keep {
        case .local:
            kept.forEach(kill)
            guard after.entries[path] == .file(current) else {
                throw failure("resolve", "keeping the local version of /\(path) left \(left)")
            }
        case .remote:
            kill(current)
            guard case .file(let now)? = after.entries[path], kept.contains(now) else {
                throw failure("resolve", "keeping the remote version of /\(path) left \(left)")
            }
            for version in kept where version != now { kill(version) }
        case .both:
            let siblings = after.entries.filter { Self.parent($0.key) == Self.parent(path) }.values
            guard after.entries[path] == .file(current), kept.allSatisfy({ siblings.contains(.file($0)) }) else {
                throw failure("resolve", "keeping both versions of /\(path) left \(left) and "
                    + siblings.map(\.description).joined(separator: ", "))
            }
        }
        stepTookTree = true
        stepWasDurable = true
    }

    /// An open of `path` failed with `error`: fine only for a placeholder, while the remote cannot be reached or
    /// no longer has its version (a change not merged yet).
    func expectDownloadMayFail(_ path: String, _ error: any Error, _ what: String) throws {
        let node = try fileSystem.node(core.ino(path))
        guard let node, !node.state.hasLocalContent else {
            throw failure(what, "\(what) of /\(path), which is here, failed: \(error)")
        }
        if provider.isOffline { return note("\(what) of /\(path) failed (offline): \(error)") }
        let current = provider.items().first { $0.id == node.itemID }
        guard current?.version != node.remoteVersion else {
            throw failure(what, "\(what) of /\(path) failed although the remote has its version: \(error)")
        }
        note("\(what) of /\(path) failed (the remote moved on from \(node.remoteVersion ?? "nil")): \(error)")
    }

    // MARK: Known defects

    /// Whether a change here in the folder at `path` would show ``ReferenceDefect/changeInFolderDeletedElsewhere``
    /// (the remote no longer has the folder) while that defect is avoided.
    func avoidsChange(in path: String) -> Bool {
        guard avoiding.contains(.changeInFolderDeletedElsewhere), !path.isEmpty, let ino = try? core.ino(path),
              let node = fileSystem.node(ino), node.remoteVersion != nil else { return false }
        return !provider.items().contains { $0.id == node.itemID }
    }

    /// Whether moving the folder at `source` into the folder at `folder` here would show
    /// ``ReferenceDefect/moveCycle`` (the remote has `folder` below `source`) while that defect is avoided.
    func avoidsCycle(moving source: String, into folder: String) -> Bool {
        guard avoiding.contains(.moveCycle), model[source] == .directory, !folder.isEmpty,
              let moved = (try? core.ino(source)).flatMap(fileSystem.node),
              let destination = (try? core.ino(folder)).flatMap(fileSystem.node) else { return false }
        let items = Dictionary(provider.items().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var current: ItemID? = destination.itemID
        while let id = current, let item = items[id] {
            if id == moved.itemID { return true }
            current = item.parentID
        }
        return false
    }

    /// Whether renaming the file at `source` over another would show
    /// ``ReferenceDefect/conflictedFileRenamedOverAnother`` (it has conflict versions) while that defect is avoided.
    func avoidsReplacing(with source: String) -> Bool {
        guard avoiding.contains(.conflictedFileRenamedOverAnother), let ino = try? core.ino(source) else {
            return false
        }
        return ((try? fileSystem.versions(of: ino))?.count ?? 0) > 1
    }

    /// Whether removing the folder at `path` here would show ``ReferenceDefect/folderRemovedWhileFilledElsewhere``
    /// (the remote has children in it) while that defect is avoided.
    func avoidsRemoving(_ path: String) -> Bool {
        guard avoiding.contains(.folderRemovedWhileFilledElsewhere), let ino = try? core.ino(path),
              let node = fileSystem.node(ino) else { return false }
        return provider.items().contains { $0.parentID == node.itemID }
    }
}
