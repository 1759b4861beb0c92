extension Node {
    /// Where a node keeps the tags the remote had as this device last knew them (the base of the next merge and
    /// of the next upload of its tags), comma-separated; absent when it never knew. A `user.folio.*` name, so it
    /// is neither listed nor readable nor settable through the mount (those names are Folio's own).
    static let remoteTagsAttribute = "user.folio.remote-tags"

    /// The item's tags (`user.xdg.tags`, comma-separated); setting them writes the attribute (removed when
    /// empty).
    public var tags: [String] {
        get { xattrs[VirtualFolder.tagsAttribute].map(VirtualFolder.tags(in:)) ?? [] }
        set {
            if newValue.isEmpty {
                xattrs[VirtualFolder.tagsAttribute] = nil
            } else {
                xattrs[VirtualFolder.tagsAttribute] = Array(newValue.joined(separator: ",").utf8)
            }
        }
    }

    /// The tags the remote had as this device last knew them; `nil` if it never knew.
    public var remoteTags: [String]? {
        get { xattrs[Self.remoteTagsAttribute].map(VirtualFolder.tags(in:)) }
        set { xattrs[Self.remoteTagsAttribute] = newValue.map { Array($0.joined(separator: ",").utf8) } }
    }

    /// Whether the tags here differ from the remote's as last known, so an update of them waits for upload (an
    /// item the remote never told its tags has to send the ones it has). Metadata only: never a content change.
    public var tagsPending: Bool {
        guard !kind.isLocalOnly, !itemID.isContainerRoot else { return false }
        if let remoteTags { return !TagUpdate.same(tags, remoteTags) }
        return !tags.isEmpty
    }

    /// The update of this node's tags to send, if one waits.
    public var pendingTagUpdate: TagUpdate? {
        tagsPending ? TagUpdate(base: remoteTags, tags: tags) : nil
    }

    /// Takes the remote's tags (`nil`: the remote keeps none, so the ones here stay): merged with a change of them
    /// made here and not sent yet (``TagUpdate/merge(base:local:remote:)`` from the last known base), which is
    /// then sent. Returns whether the tags here changed.
    @discardableResult
    mutating func mergeRemoteTags(_ remote: [String]?) -> Bool {
        guard let remote else { return false }
        let before = tags
        let merged = tagsPending ? TagUpdate.merge(base: remoteTags, local: before, remote: remote) : remote
        if !TagUpdate.same(merged, before) { tags = merged }
        remoteTags = remote
        return !TagUpdate.same(merged, before)
    }

    /// Records that an update of the tags (`sent`) landed, and that the remote answered with `answer` (`nil`: it
    /// keeps no tags): a change made here meanwhile is merged from what was sent, and still waits.
    mutating func tagUpdateLanded(_ sent: TagUpdate, answer: [String]?) {
        let remote = answer ?? sent.tags
        let merged = TagUpdate.merge(base: sent.tags, local: tags, remote: remote)
        if !TagUpdate.same(merged, tags) { tags = merged }
        remoteTags = remote
    }
}
