import FolioCore

extension ContainerIndex {
    /// What an item of a listed folder looked like.
    struct Seen: Equatable, Sendable {
        /// Its parent (`nil`: the container's root).
        var parentID: ItemID?
        /// Its name, kind, version, mode, time and target, as one comparable string.
        var signature: String

        /// The state of `item`.
        init(_ item: RemoteItem) {
            parentID = item.parentID
            signature = "\(item.kind.rawValue)|\(item.version)|\(item.mode)|"
                + "\(item.modificationTime.totalNanoseconds)|\(item.symlinkTarget ?? "")|\(item.name)"
        }
    }

    /// Whether `folder` was listed in this process.
    func isListed(_ folder: ItemID?) -> Bool { listings[folder] != nil }

    /// Takes note of `item` as it is now; returns whether it differs from what was seen (`isNew` answers for
    /// an item not seen before). Kept only while its folder is listed.
    mutating func observe(_ item: RemoteItem, isNew: Bool) -> Bool {
        let now = Seen(item)
        let before = seen[item.id]
        if let before, before.parentID != item.parentID { listings[before.parentID]?.remove(item.id) }
        if listings[item.parentID] != nil {
            listings[item.parentID]?.insert(item.id)
            seen[item.id] = now
        } else {
            seen[item.id] = nil
        }
        return before.map { $0 != now } ?? isNew
    }

    /// Starts the baseline of a folder being listed (its children are observed next).
    mutating func startListing(_ folder: ItemID?) {
        guard listings[folder] == nil else { return }
        listings[folder] = []
        sweepOrder.append(folder)
    }

    /// Forgets an item that left the container, and what was seen below it.
    mutating func forget(_ id: ItemID) {
        places[id] = nil
        if let before = seen.removeValue(forKey: id) { listings[before.parentID]?.remove(id) }
        guard let children = listings.removeValue(forKey: id) else { return }
        for child in children { forget(child) }
    }

    /// The next `count` listed folders of the sweep, round robin (each at most once).
    mutating func nextToSweep(_ count: Int) -> [ItemID?] {
        let listed = listings
        sweepOrder.removeAll { listed[$0] == nil }
        guard !sweepOrder.isEmpty else { return [] }
        var folders: [ItemID?] = []
        for _ in 0..<min(count, sweepOrder.count) {
            if sweepPosition >= sweepOrder.count { sweepPosition = 0 }
            folders.append(sweepOrder[sweepPosition])
            sweepPosition += 1
        }
        return folders
    }
}
