import FolioCore

extension ContainerIndex {
    /// What an item of a listed folder looked like.
    struct Seen: Equatable, Sendable {
        /// Its parent (`nil`: the container's root).
        var parentID: ItemID?
        /// A hash of its name, kind, version, mode, time and target (compared in this process only: a few bytes
        /// per item instead of the strings).
        var signature: Int
        /// ``stamp(of:)`` of its status when it was seen, if that status is old enough to be trusted (a change in
        /// the same tick of the kernel's coarse clock would leave the same change time): an entry with the same
        /// stamp is unchanged, and need not be read again.
        var stamp: Int? { storedStamp == 0 ? nil : storedStamp }
        /// ``stamp``, 0 for none (a stamp that hashes to 0 is not kept: that entry is read again). An optional
        /// would take a word more per item, and some 20 bytes more with the dictionary's empty buckets.
        private var storedStamp: Int

        /// The state of `item`, whose status had `stamp`.
        init(_ item: RemoteItem, stamp: Int? = nil) {
            parentID = item.parentID
            storedStamp = stamp ?? 0
            var hasher = Hasher()
            hasher.combine(item.name)
            hasher.combine(item.kind)
            hasher.combine(item.version)
            hasher.combine(item.mode)
            hasher.combine(item.modificationTime.totalNanoseconds)
            hasher.combine(item.symlinkTarget)
            signature = hasher.finalize()
        }
    }

    /// A hash of what changes whenever anything about a file or folder changes (its change time, which no one
    /// can set by hand, with its inode and size).
    static func stamp(of status: FileStatus) -> Int {
        var hasher = Hasher()
        hasher.combine(status.device)
        hasher.combine(status.inode)
        hasher.combine(status.changeTime.totalNanoseconds)
        hasher.combine(status.size)
        hasher.combine(status.kind)
        return hasher.finalize()
    }

    /// Whether `folder` was listed in this process.
    func isListed(_ folder: ItemID?) -> Bool { listings[folder] != nil }

    /// Whether `folder` was listed to its last page in this process: a child not seen in it is new.
    func isBaselined(_ folder: ItemID?) -> Bool { listings[folder] != nil && !unfinished.contains(folder) }

    /// Takes note of `item` as it is now; returns whether it differs from what was seen (`isNew` answers for
    /// an item not seen before). Kept only while its folder is listed.
    mutating func observe(_ item: RemoteItem, isNew: Bool, stamp: Int? = nil) -> Bool {
        let now = Seen(item, stamp: stamp)
        let before = seen[item.id]
        if let before, before.parentID != item.parentID { listings[before.parentID]?.remove(item.id) }
        if listings[item.parentID] != nil {
            listings[item.parentID]?.insert(item.id)
            seen[item.id] = now
        } else {
            seen[item.id] = nil
        }
        return before.map { $0.parentID != now.parentID || $0.signature != now.signature } ?? isNew
    }

    /// Starts the baseline of a folder being listed (its children are observed next).
    mutating func startListing(_ folder: ItemID?) {
        guard listings[folder] == nil else { return }
        listings[folder] = []
        unfinished.insert(folder)
        sweepOrder.append(folder)
    }

    /// Notes that a listing of `folder` reached its last page.
    mutating func finishListing(_ folder: ItemID?) {
        unfinished.remove(folder)
    }

    /// Forgets an item that left the container, and what was seen below it.
    mutating func forget(_ id: ItemID) {
        places[id] = nil
        if let before = seen.removeValue(forKey: id) { listings[before.parentID]?.remove(id) }
        unfinished.remove(id)
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
