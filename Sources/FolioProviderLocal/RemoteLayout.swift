import SystemPackage
import FolioCore

/// Where things live in a local remote directory `DIR`. A remote Folio made (``isAdopted`` false):
///
/// - `DIR/<container id>/…` — each container's documents;
/// - `DIR/.folio-remote.json` — the manifest (container display names and visibility);
/// - `DIR/.folio/` — provider state: `simulate.json` (network simulation override), `symlink-ids.json`
///   (ids of symlinks, which cannot carry user xattrs), `staging/` (uploads in progress), `sample-remote`,
///   `journal/<container id>` (the container's change journal: ``ChangeJournal``).
///
/// Change anchors: every change the provider makes (create, content or metadata change, rename or move, delete)
/// and every change found made by hand (a folder listed again after a watcher saw it change, or by the sweep)
/// is appended to the container's journal under the remote's lock (``RemoteLock``), so the records of two
/// processes (two devices) interleave in the order of their changes. An anchor (``JournalAnchor``) is the
/// remote's id, the journal's generation and a position in it; ``LocalProvider/changes(in:since:)`` reads the
/// records after it and reports their items as they are now. Past its size limit a journal drops its oldest
/// half, which expires the anchors before it; deleting the journal file (``LocalProvider/expireAnchors(in:)``
/// does) expires every anchor of the container.
///
/// An adopted folder of documents (``isAdopted``, see `RemoteLayout+Adopted.swift`) is the Drive container
/// itself, and everything of Folio's, the manifest and the journals included, is in `DIR/.folio/`.
struct RemoteLayout: Hashable, Sendable {
    /// The remote directory.
    var root: FilePath
    /// Whether `root` is an adopted folder of documents (the Drive container itself) rather than a remote Folio
    /// made.
    var isAdopted = false

    /// The manifest file.
    var manifest: FilePath {
        isAdopted ? stateDirectory.appending("manifest.json") : root.appending(".folio-remote.json")
    }
    /// The provider's own state directory.
    var stateDirectory: FilePath { root.appending(".folio") }
    /// The network simulation override file.
    var simulationOverride: FilePath { stateDirectory.appending("simulate.json") }
    /// The symlink id index.
    var symlinkIndex: FilePath { stateDirectory.appending("symlink-ids.json") }
    /// Where uploads are written before they are renamed into place.
    var staging: FilePath { stateDirectory.appending("staging") }
    /// Where the change journals are.
    var journalDirectory: FilePath { stateDirectory.appending("journal") }
    /// The marker of a remote filled by ``SampleRemote``.
    var sampleMarker: FilePath { stateDirectory.appending("sample-remote") }

    /// A container's change journal.
    func journal(of container: ContainerID) -> FilePath { journalDirectory.appending(container.rawValue) }

    /// A container's top-level directory.
    func directory(of container: ContainerID) -> FilePath {
        guard isAdopted else { return root.appending(container.rawValue) }
        return container == .drive ? root : adoptedContainers.appending(container.rawValue)
    }
}
