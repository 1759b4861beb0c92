/// What `folio containers` shows of each container: counted over the items this state knows.
extension FolioFileSystem {
    /// Per container: the items known here (a folder not listed yet counts as one item, its children unknown),
    /// their size, and how much of it is on this machine.
    public func containerStatistics() -> [ContainerID: ContainerStatistics] {
        state.withLock { state in
            try? loadAllStored(state: &state)  // (a store that cannot be read: what memory has is counted)
            var statistics: [ContainerID: ContainerStatistics] = [:]
            for node in state.nodes.values where !node.itemID.isContainerRoot && !node.kind.isLocalOnly {
                var entry = statistics[node.container, default: ContainerStatistics()]
                entry.items += 1
                if node.kind == .file {
                    entry.bytes += node.size
                    if let kept = state.partials[node.ino] {
                        entry.localBytes += kept.present
                    } else if node.state.hasLocalContent {
                        entry.localBytes += node.size
                    }
                }
                if node.needsListing { entry.foldersNotListed += 1 }
                statistics[node.container] = entry
            }
            for (container, ino) in state.containerRootInos() {
                if state.nodes[ino]?.needsListing == true {
                    statistics[container, default: ContainerStatistics()].foldersNotListed += 1
                }
            }
            return statistics
        }
    }

    /// Whether this state knows container `container` (its root was registered).
    public func knowsContainer(_ container: ContainerID) -> Bool {
        state.withLock { $0.byItemID[.root(of: container)] != nil } || container == .drive
    }
}

/// The counts of one container, as `folio containers` shows them.
public struct ContainerStatistics: Hashable, Sendable, Codable {
    /// Items known here (files, folders, symlinks; the root not counted).
    public var items = 0
    /// Bytes of the files known here.
    public var bytes: Int64 = 0
    /// Bytes of those files on this machine.
    public var localBytes: Int64 = 0
    /// Folders (the root included) whose children were never listed here: the counts leave them out.
    public var foldersNotListed = 0

    /// Nothing counted yet.
    public init() {}
}

extension State {
    /// The root inode of every container this state knows.
    func containerRootInos() -> [(ContainerID, UInt64)] {
        byItemID.compactMap { id, ino in
            guard id.isContainerRoot, let node = nodes[ino] else { return nil }
            return (node.container, ino)
        }
    }
}
