import Foundation

/// A change of an item's tags sent to a provider (``RemoteItemChanges/tags``): the tags this device has now and
/// the tags it last knew the remote to have. The provider merges it into the tags it holds, atomically with its
/// other writers, with ``merged(into:)``: what this device added is added, what it removed is removed, and what
/// other devices did meanwhile stays. So two devices that tag an item at the same time both end with both
/// changes (a set union of what each added), and a change of tags is never a change of content.
public struct TagUpdate: Hashable, Sendable, Codable {
    /// The tags the remote had as this device last knew them; `nil` if it never knew (then nothing is removed:
    /// the result is the union of both).
    public var base: [String]?
    /// The tags the item has on this device.
    public var tags: [String]

    /// An update from `base` to `tags`.
    public init(base: [String]?, tags: [String]) {
        self.base = base
        self.tags = tags
    }

    /// The tags a remote that holds `remote` holds after this update.
    public func merged(into remote: [String]) -> [String] {
        Self.merge(base: base, local: tags, remote: remote)
    }

    /// The three-way merge of two sets of tags that both started from `base`: a tag is kept if both sides have
    /// it, or if one side added it (it is not in `base`); a tag one side removed goes unless the other added it.
    /// Without a base, nothing was removed: the union. Order: `local`'s tags first, then the remote's new ones.
    public static func merge(base: [String]?, local: [String], remote: [String]) -> [String] {
        let remoteSet = Set(remote)
        guard let base else { return unique(local + remote) }
        let baseSet = Set(base)
        let localSet = Set(local)
        let kept = local.filter { remoteSet.contains($0) || !baseSet.contains($0) }
        let added = remote.filter { !baseSet.contains($0) || localSet.contains($0) }
        return unique(kept + added)
    }

    /// Whether two lists hold the same tags, whatever their order.
    public static func same(_ left: [String]?, _ right: [String]?) -> Bool {
        left.map(Set.init) == right.map(Set.init)
    }

    /// `tags` without repeats, in their first order.
    static func unique(_ tags: [String]) -> [String] {
        var seen: Set<String> = []
        return tags.filter { seen.insert($0).inserted }
    }

    /// Why `tag` cannot be a tag, or `nil` if it can: a tag is a folder name in `.Tags/` and one item of the
    /// comma-separated `user.xdg.tags`.
    public static func problem(with tag: String) -> String? {
        let trimmed = tag.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return "a tag cannot be empty" }
        if trimmed != tag { return "a tag cannot start or end with a space" }
        if tag.contains(",") { return "a tag cannot contain ',' (user.xdg.tags separates tags with commas)" }
        if tag.contains("/") { return "a tag cannot contain '/' (it names a folder in .Tags/)" }
        if tag == "." || tag == ".." { return "a tag cannot be '.' or '..'" }
        if tag.utf8.contains(0) { return "a tag cannot contain a NUL byte" }
        if tag.utf8.count > 255 { return "a tag is at most 255 bytes" }
        return nil
    }
}
