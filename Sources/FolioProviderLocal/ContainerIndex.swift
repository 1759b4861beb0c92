import FolioCore

/// The in-memory map from item id to place (parent id and name) of one container. Paths are computed by
/// walking up the parents, so renaming a folder updates one entry. Entries can be stale (someone changed the
/// remote by hand): every hit is checked against the disk, and a miss looks for the item folder by folder.
///
/// It also remembers, for each folder listed in this process, its children as they were last seen
/// (``listings``, ``seen``): the baseline a new listing of the folder is compared with, so changes made by
/// hand are found and journaled (``RemoteTree/listFolder(_:in:after:limit:)``, ``RemoteTree/settle(_:in:)``).
struct ContainerIndex: Sendable {
    /// Where an item is.
    struct Place: Hashable, Sendable {
        /// The parent folder, or `nil` for the container's root.
        var parentID: ItemID?
        /// The item's name in its parent.
        var name: String
        /// Whether the item is a regular file (only a file's id passes to a file that replaced it).
        var isFile = false
    }

    /// Places by item id.
    var places: [ItemID: Place] = [:]
    /// The children of each folder listed in this process (`nil`: the container's root), as last seen.
    var listings: [ItemID?: Set<ItemID>] = [:]
    /// The state last seen of each item of a listed folder.
    var seen: [ItemID: Seen] = [:]
    /// Listed folders whose first listing has not reached its last page yet.
    var unfinished: Set<ItemID?> = []
    /// Whether every folder of the container was walked in this process (a scan, or a search that found
    /// nothing): an item the index lacks was made since by someone else.
    var isComplete = false
    /// The listed folders in the order the sweep visits them, and the next one's position.
    var sweepOrder: [ItemID?] = []
    /// See ``sweepOrder``.
    var sweepPosition = 0

    /// The path components of an item below the container's directory, or `nil` if the item (or one of its
    /// ancestors) is unknown or the parents form a cycle.
    func components(of id: ItemID) -> [String]? {
        var reversed: [String] = []
        var current: ItemID? = id
        while let item = current {
            guard let place = places[item], reversed.count <= places.count else { return nil }
            reversed.append(place.name)
            current = place.parentID
        }
        return reversed.reversed()
    }

    /// Removes an item and everything below it; returns the removed places.
    @discardableResult
    mutating func removeSubtree(_ id: ItemID) -> [ItemID: Place] {
        var removed: [ItemID: Place] = [:]
        for candidate in places.keys where isSelfOrDescendant(candidate, of: id) {
            removed[candidate] = places[candidate]
        }
        for key in removed.keys { places[key] = nil }
        return removed
    }

    /// Whether `candidate` is `ancestor` or lies below it.
    private func isSelfOrDescendant(_ candidate: ItemID, of ancestor: ItemID) -> Bool {
        var current: ItemID? = candidate
        var steps = 0
        while let item = current, steps <= places.count {
            if item == ancestor { return true }
            current = places[item]?.parentID
            steps += 1
        }
        return false
    }
}
