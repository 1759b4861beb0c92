/// The virtual folders of the full view's root (DESIGN.md §1 "Recents, Tags"): `.Recents/` lists the documents
/// used last, `.Tags/` one folder per tag with the documents that carry it (`user.xdg.tags`, the freedesktop
/// attribute, comma-separated). Their entries are the documents themselves (same inode, opened in place), like
/// external references; the folders are computed on each listing, read-only, and never uploaded. Folders that
/// carry a tag are not listed (the kernel allows a folder at one path only).
///
/// Virtual folders have inode numbers above ``firstIno``, which the store's inode counter never reaches.
public enum VirtualFolder: Hashable, Sendable {
    /// `.Recents/`.
    case recents
    /// `.Tags/`.
    case tags
    /// `.Tags/<tag>/`.
    case tag(String)
    /// `.Recents/` at the root of an app container (so of its app view): the documents used last that the app
    /// may open (its own, and those granted to it).
    case appRecents(ContainerID)

    /// Virtual inodes start here (2^62).
    public static let firstIno: UInt64 = 1 << 62
    /// How many documents `.Recents/` lists.
    public static let recentsLimit = 50
    /// The extended attribute that holds an item's tags.
    public static let tagsAttribute = "user.xdg.tags"

    /// Whether `ino` is a virtual folder's.
    public static func isVirtual(_ ino: UInt64) -> Bool { ino >= firstIno }

    /// The name of the folder in its parent.
    public var name: String {
        switch self {
        case .recents, .appRecents: return ".Recents"
        case .tags: return ".Tags"
        case .tag(let tag): return tag
        }
    }

    /// The tags in an `user.xdg.tags` value: comma-separated, trimmed, without empty ones or ones that are not
    /// valid names.
    public static func tags(in value: [UInt8]) -> [String] {
        String(decoding: value, as: UTF8.self).split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.contains("/") && $0 != "." && $0 != ".." }
    }
}

/// The bookkeeping behind the virtual folders, kept with the rest of the core's state.
struct VirtualFolderState: Sendable {
    /// When each item was last opened or committed.
    var lastUse: [ItemID: Timestamp] = [:]
    /// When each inode was last opened or committed in this run (every one, for the cache limit's LRU order).
    var lastOpened: [UInt64: Timestamp] = [:]
    /// `lastUse` changed since it was last written to the store.
    var lastUseUnsaved = false
    /// Inodes handed out for virtual folders (stable while the daemon runs).
    var inos: [VirtualFolder: UInt64] = [.recents: VirtualFolder.firstIno + 1, .tags: VirtualFolder.firstIno + 2]
    var folders: [UInt64: VirtualFolder] = [VirtualFolder.firstIno + 1: .recents, VirtualFolder.firstIno + 2: .tags]
    var nextIno: UInt64 = VirtualFolder.firstIno + 16

    /// The store key of `lastUse`.
    static let storeKey = "recents"

    mutating func ino(of folder: VirtualFolder) -> UInt64 {
        if let ino = inos[folder] { return ino }
        defer { nextIno += 1 }
        inos[folder] = nextIno
        folders[nextIno] = folder
        return nextIno
    }

    /// Records a use of `item`; only the most recent uses are kept.
    mutating func recordUse(of item: ItemID, at time: Timestamp) {
        if let previous = lastUse[item], time.seconds - previous.seconds < 1 { return }
        lastUse[item] = time
        lastUseUnsaved = true
        if lastUse.count > VirtualFolder.recentsLimit * 2 {
            let kept = lastUse.sorted { $0.value > $1.value }.prefix(VirtualFolder.recentsLimit)
            lastUse = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        }
    }

    /// `lastUse` as stored: `seconds.nanoseconds id` lines.
    func encodedLastUse() -> String {
        lastUse.map { "\($0.value.seconds).\($0.value.nanoseconds) \($0.key.rawValue)" }.joined(separator: "\n")
    }

    /// Reads what ``encodedLastUse()`` wrote; lines it cannot read are skipped.
    mutating func decodeLastUse(_ text: String) {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let time = parts[0].split(separator: ".")
            guard time.count == 2, let seconds = Int64(time[0]), let nanoseconds = Int64(time[1]) else { continue }
            lastUse[ItemID(String(parts[1]))] = Timestamp(seconds: seconds, nanoseconds: nanoseconds)
        }
    }
}
