import FolioCore

/// What an ``InMemoryProvider`` holds: the containers, their items with content, the change history of each
/// container, and every version's bytes ever written (so a test can tell what content a version had). A value:
/// every operation is a synchronous mutating function, atomic because the provider runs it under one lock.
struct InMemoryRemote: Sendable {
    /// One item and what the remote keeps with it.
    struct Entry: Sendable {
        /// Its metadata as the provider describes it.
        var item: RemoteItem
        /// A file's bytes (empty for folders and symlinks).
        var content: [UInt8]
        /// The retry tag of the upload that wrote the current version (``RemoteItemChanges/retryTag``).
        var writtenBy: String?
        /// The description kept for one version, with its thumbnails.
        var description: ContentDescription?
        /// The thumbnails of ``description``.
        var thumbnails: [ThumbnailSize: [UInt8]] = [:]
    }

    /// One container.
    struct Space: Sendable {
        /// The container's description.
        var container: Container
        /// Its items by id.
        var entries: [ItemID: Entry] = [:]
        /// Every change, in order: the history position and the item created, changed, moved, or gone.
        var log: [(position: UInt64, id: ItemID)] = []
        /// Anchors before this position can no longer be answered for (the history was trimmed).
        var trimmedBefore: UInt64 = 0
    }

    /// The containers by id.
    var spaces: [ContainerID: Space]
    /// The position in the history of every container: goes up with every change.
    var position: UInt64 = 0
    /// The last number given to a version.
    var lastVersion: UInt64 = 0
    /// The bytes of every file version ever written, by version.
    var versions: [String: [UInt8]] = [:]
    /// Names the remote refuses beyond the universal ones.
    let policy = NamePolicy()

    /// A remote with the Drive container and `containers`, all empty.
    init(containers: [Container]) {
        spaces = [ContainerID.drive: Space(container: .drive)]
        for container in containers { spaces[container.id] = Space(container: container) }
    }

    // MARK: Looking up

    /// The space of `container`, or `.notFound`.
    func space(_ container: ContainerID) throws(FolioError) -> Space {
        guard let space = spaces[container] else { throw .notFound("container \(container)") }
        return space
    }

    /// `nil` for the container's root (given as `nil` or as its root id), the id otherwise.
    static func folderID(_ id: ItemID?) -> ItemID? {
        guard let id, !id.isContainerRoot else { return nil }
        return id
    }

    /// The children of `folder` (`nil`: the root) in `container`, by name.
    func children(of folder: ItemID?, in container: ContainerID) -> [RemoteItem] {
        (spaces[container]?.entries.values.map(\.item) ?? []).filter { $0.parentID == folder }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// Checks that `folder` (`nil`: the root) is a folder of `container`.
    func checkFolder(_ folder: ItemID?, in container: ContainerID) throws(FolioError) {
        let space = try space(container)
        guard let folder else { return }
        guard let entry = space.entries[folder] else { throw .notFound("folder \(folder) in \(container)") }
        guard entry.item.kind == .directory else { throw .notDirectory("\(entry.item.name) (\(folder))") }
    }

    /// Whether `name` is taken in `folder` of `container` by another item than `except`.
    func isTaken(_ name: String, in folder: ItemID?, of container: ContainerID, except: ItemID? = nil) -> Bool {
        spaces[container]?.entries.values.contains {
            $0.item.parentID == folder && $0.item.name == name && $0.item.id != except
        } ?? false
    }

    /// Whether `id` is `ancestor` or lies below it in `container`.
    func isWithin(_ id: ItemID?, _ ancestor: ItemID, in container: ContainerID) -> Bool {
        var current = id
        var steps = 0
        while let next = current, steps <= (spaces[container]?.entries.count ?? 0) {
            if next == ancestor { return true }
            current = spaces[container]?.entries[next]?.item.parentID
            steps += 1
        }
        return false
    }

    /// The container that holds `id`, if any.
    func containerHolding(_ id: ItemID) -> ContainerID? {
        spaces.first { $0.value.entries[id] != nil }?.key
    }

    // MARK: Recording

    /// A new version string for a file's (or other item's) content.
    mutating func newVersion(_ kind: ItemKind) -> String {
        lastVersion += 1
        switch kind {
        case .directory: return "d\(lastVersion)"
        case .symlink: return "s\(lastVersion)"
        default: return "m\(lastVersion)"
        }
    }

    /// Notes in `container`'s history that `id` changed (or left it).
    mutating func noteChanged(_ id: ItemID, in container: ContainerID) {
        position += 1
        spaces[container]?.log.append((position, id))
    }

    /// The ids of `id` and everything below it in `container`.
    func subtree(_ id: ItemID, in container: ContainerID) -> [ItemID] {
        var found = [id]
        var index = 0
        while index < found.count {
            let parent = found[index]
            found += spaces[container]?.entries.values.filter { $0.item.parentID == parent }.map(\.item.id) ?? []
            index += 1
        }
        return found
    }
}
