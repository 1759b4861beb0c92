import FolioCore
import Foundation
import SystemPackage

/// Tags (``RemoteItem/tags``) kept beside the documents, never in them (nor in the xattrs of an adopted folder's
/// files, which are the user's): `DIR/.folio/tags/<two hex digits>/<id>.json`, a JSON array of strings, keyed by
/// the item's id so renames and moves keep them; no file means no tags. Written atomically under the tree's lock
/// (``RemoteLock`` across processes), so a ``TagUpdate`` is merged atomically with every other writer of this
/// remote (another daemon on it is another device). A change of tags is
/// journaled as a change of the item (reported by ``LocalProvider/changes(in:since:)``) and leaves its version
/// as it is: it is never taken for a change of content.
extension RemoteLayout {
    /// The attribute of the state folder whose change announces a change of tags.
    static let tagsChangedAttribute = "user.folio.tags-changed"

    /// Where the tags of items are.
    var tagsDirectory: FilePath { stateDirectory.appending("tags") }

    /// The spread folder of one item's tags file.
    func tagsFolder(of id: ItemID) -> FilePath {
        Self.spreadFolder(of: id, in: tagsDirectory)
    }

    /// The file of one item's tags.
    func tagsFile(of id: ItemID) -> FilePath {
        tagsFolder(of: id).appending(Self.fileName(of: id) + ".json")
    }

    /// The tags kept for `id` (none if no file, or one that cannot be read as tags).
    func storedTags(of id: ItemID) -> [String] {
        guard let data = SystemCalls.smallFileContents(tagsFile(of: id)),
            let tags = try? JSONDecoder().decode([String].self, from: Data(data))
        else { return [] }
        return tags
    }

    /// ``storedTags(of:)`` of one of many items: `index` says first whether the item has a tags file at all
    /// (most have none), its folder looked at once per pass (`checked`).
    func storedTags(
        of id: ItemID, index: SpreadFolderIndex, checked: inout [FilePath: SpreadFolderIndex.Names?]
    ) -> [String] {
        if index.contains(Self.fileName(of: id) + ".json", in: tagsFolder(of: id), checked: &checked) == false {
            return []
        }
        return storedTags(of: id)
    }

    /// Keeps `tags` for `id` (removes the file when there are none).
    func storeTags(_ tags: [String], of id: ItemID) throws {
        let path = tagsFile(of: id)
        guard !tags.isEmpty else {
            SystemCalls.removeFileQuietly(path)
            return
        }
        try SystemCalls.makeDirectories(path.removingLastComponent())
        try AtomicFile.write(try JSONEncoder().encode(tags), to: path)
    }

    /// Merges `update` into the tags kept for `id`; returns whether they changed. A change is announced to the
    /// watchers of every process on this remote (``RemoteWatcher``: push), which watch the remote's folder but
    /// not the state folder inside it: an attribute of the state folder (Folio's own) is set, an `IN_ATTRIB` in the
    /// remote's folder (setting the folder's time is reported as `IN_MODIFY`, which the watchers do not ask for).
    /// (Called under the tree's lock: a process woken by it reads the journal once the change's record is in.)
    @discardableResult
    func applyTags(_ update: TagUpdate, to id: ItemID) throws -> Bool {
        let current = storedTags(of: id)
        let merged = update.merged(into: current)
        guard merged != current else { return false }
        try storeTags(merged, of: id)
        let stamp = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try? SystemCalls.setExtendedAttribute(Self.tagsChangedAttribute, stamp, of: stateDirectory)
        return true
    }
}
