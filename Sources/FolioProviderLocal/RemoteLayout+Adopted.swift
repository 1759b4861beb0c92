import FolioCore
import SystemPackage

/// An adopted folder of documents (`folio mount --remote ~/Documents/archive`): a folder Folio did not make,
/// which becomes the Drive container as it is (its top-level items at the mount's root). Folio writes nothing
/// among the user's items until something is changed through the mount: no manifest beside them, no extended
/// attributes on them. Everything of Folio's is in one hidden folder at the top, `DIR/.folio/`, never listed as
/// an item:
///
/// - `manifest.json` — the manifest (``RemoteManifest``: the remote's identity, containers);
/// - `item-ids.json` — ids, revisions and modes of the files and folders changed or made through Folio
///   (``ItemIDMap``; every other item's id is derived from its inode);
/// - `symlink-ids.json`, `lock`, `staging/`, `simulate.json` — as in a remote Folio made;
/// - `containers/<id>/` — app containers (public or private) that apps create: the user's folder holds only
///   the Drive.
extension RemoteLayout {
    /// The manifest's name inside the state directory of an adopted folder.
    static let adoptedManifestName = "manifest.json"

    /// The layout of the remote at `root` as it is on disk: adopted if `root/.folio/manifest.json` exists, the
    /// layout of a remote Folio made otherwise (also for a folder that is no remote yet).
    static func existing(at root: FilePath) -> RemoteLayout {
        let adopted = RemoteLayout(root: root, isAdopted: true)
        let found = (try? SystemCalls.statusIfPresent(adopted.manifest)) ?? nil
        return found == nil ? RemoteLayout(root: root) : adopted
    }

    /// Where the app containers of an adopted folder are.
    var adoptedContainers: FilePath { stateDirectory.appending("containers") }

    /// The id map of an adopted folder.
    var itemIDIndex: FilePath { stateDirectory.appending("item-ids.json") }

    /// Whether `path` is Folio's own bookkeeping folder (`DIR/.folio`), which is never an item (it lies inside
    /// the Drive container's folder only in an adopted folder).
    func isBookkeeping(_ path: FilePath) -> Bool { path == stateDirectory }
}
