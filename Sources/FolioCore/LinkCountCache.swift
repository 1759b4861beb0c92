/// Folders' link counts (2 + their subfolders) as computed at a version of the tree's names
/// (`State.childrenVersion`). Counting a folder's subfolders walks all its children; the kernel asks for a
/// folder's attributes again after each invalidation of them, and a folder of 10,000 that appeared on the remote
/// has 10,000 creations replayed to watchers, each dropping them, while `ls -l` checks the folder's permissions
/// once for each file: walked each time, that is 10^8 steps under the core's lock.
///
/// Guarded by the core's lock, like the `State` that holds it (hence `@unchecked Sendable`): it is changed
/// through a `borrowing State`, where attributes are described.
final class LinkCountCache: @unchecked Sendable {
    private var counts: [UInt64: (version: UInt64, count: UInt32)] = [:]

    /// The link count of folder `ino` at `version`: the one computed at that version, or `compute()`'s.
    func count(of ino: UInt64, at version: UInt64, compute: () -> UInt32) -> UInt32 {
        if let known = counts[ino], known.version == version { return known.count }
        let count = compute()
        if counts.count >= 4096 { counts.removeAll(keepingCapacity: true) }  // bounded: stale entries go too
        counts[ino] = (version, count)
        return count
    }
}
