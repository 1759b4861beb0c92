import CFUSE
import FolioCore

/// The operations that replay one remote change, and where a change can be seen at all.
extension ChangeReplayer {
    /// Whether a watch of `watched` is on a folder or an item `change` touches.
    func isWatched(_ change: ReplayedChange, _ watched: InotifyWatches) -> Bool {
        let inos: [UInt64] = switch change {
        case .created(let parent, _, _): [parent]
        case .removed(let parent, _, let attributes): [parent, attributes.ino]
        case .moved(let ino, let fromParent, _, let toParent, _): [fromParent, toParent, ino]
        case .changed(let ino, _): [fileSystem.node(ino)?.parent, ino].compactMap { $0 }
        }
        return inos.contains { ino in
            watched.inodes.contains(ino) || (ino == rootIno && watched.inodes.contains(UInt64(FUSE_ROOT_ID)))
        }
    }

    /// The operations that replay `change`, none if nobody can be watching where it happened (or, after a scan,
    /// nobody watches there: `watched`).
    func steps(for change: ReplayedChange, watched: InotifyWatches?) -> [Step] {
        if let watched, !isWatched(change, watched) { return [] }
        switch change {
        case .created(let parent, let name, let kind):
            guard watchable(parent), let path = path(of: parent, name) else { return [] }
            let operation: ReplayOperation.Kind = switch kind {
            case .directory: .makeDirectory
            case .symlink: .makeSymlink
            default: .makeFile
            }
            var step = Step(operation: ReplayOperation(kind: operation, path: path))
            step.script.absent.insert(.init(parent: parent, name: name))
            step.invalidations = [.init(parent: parent, name: name)]
            return [step]
        case .removed(let parent, let name, let attributes):
            guard watchable(parent, attributes.ino), let path = path(of: parent, name) else { return [] }
            var step = Step(operation: ReplayOperation(
                kind: attributes.kind == .directory ? .removeDirectory : .unlink, path: path))
            step.script.present[.init(parent: parent, name: name)] = current(attributes)
            step.invalidations = [.init(parent: parent, name: name)]
            return [step]
        case .moved(let ino, let fromParent, let fromName, let toParent, let toName):
            guard watchable(fromParent, toParent, ino), let attributes = try? fileSystem.getAttributes(ino),
                  let from = path(of: fromParent, fromName), let to = path(of: toParent, toName) else { return [] }
            var step = Step(operation: ReplayOperation(kind: .rename, path: from, destination: to))
            step.script.present[.init(parent: fromParent, name: fromName)] = attributes
            step.script.absent.insert(.init(parent: toParent, name: toName))
            step.invalidations = [.init(parent: fromParent, name: fromName), .init(parent: toParent, name: toName)]
            return [step]
        case .changed(let ino, let content):
            return changeSteps(ino, content: content)
        }
    }

    /// MODIFY for new content, ATTRIB for new attributes: the times, set to what they are; then, for new content of
    /// a file, OPEN and CLOSE_WRITE, which editors and file managers take as "saved" (after the first: one path per
    /// batch).
    private func changeSteps(_ ino: UInt64, content: Bool) -> [Step] {
        guard let parent = fileSystem.node(ino)?.parent, watchable(parent, ino),
              let path = fileSystem.path(of: ino, below: rootIno), !path.isEmpty,
              let attributes = try? fileSystem.getAttributes(ino) else { return [] }
        var steps = [Step(operation: ReplayOperation(
            kind: content ? .setModificationTime : .setTimes, path: path,
            seconds: attributes.modificationTime.seconds, nanoseconds: attributes.modificationTime.nanoseconds))]
        if content, attributes.kind == .file {
            steps.append(Step(operation: ReplayOperation(kind: .openForWriting, path: path)))
        }
        return steps
    }

    /// Whether a program can be watching one of `inos`: an inode the kernel never looked up (a folder nobody
    /// opened) has no watch, so a change there is not replayed (a remote tree copied into an unvisited folder
    /// costs nothing).
    private func watchable(_ inos: UInt64...) -> Bool {
        inos.contains { $0 == rootIno || fileSystem.isKnownToKernel($0) }
    }

    /// The path of `name` in `parent` relative to the mount's root, or `nil` if `parent` is not in its view.
    private func path(of parent: UInt64, _ name: String) -> String? {
        guard let relative = fileSystem.path(of: parent, below: rootIno) else { return nil }
        return relative.isEmpty ? name : "\(relative)/\(name)"
    }

    /// The item's attributes now, if the core still has it (an open file outlives its delete).
    private func current(_ attributes: Attributes) -> Attributes {
        (try? fileSystem.getAttributes(attributes.ino)) ?? attributes
    }
}
