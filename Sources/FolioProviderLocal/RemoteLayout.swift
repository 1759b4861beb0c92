import SystemPackage
import FolioCore

/// Where things live in a local remote directory `DIR`:
///
/// - `DIR/<container id>/…` — each container's documents;
/// - `DIR/.folio-remote.json` — the manifest (container display names and visibility);
/// - `DIR/.folio/` — provider state: `simulate.json` (network simulation override), `symlink-ids.json`
///   (ids of symlinks, which cannot carry user xattrs), `staging/` (uploads in progress), `sample-remote`.
struct RemoteLayout: Hashable, Sendable {
    /// The remote directory.
    var root: FilePath

    /// The manifest file.
    var manifest: FilePath { root.appending(".folio-remote.json") }
    /// The provider's own state directory.
    var stateDirectory: FilePath { root.appending(".folio") }
    /// The network simulation override file.
    var simulationOverride: FilePath { stateDirectory.appending("simulate.json") }
    /// The symlink id index.
    var symlinkIndex: FilePath { stateDirectory.appending("symlink-ids.json") }
    /// Where uploads are written before they are renamed into place.
    var staging: FilePath { stateDirectory.appending("staging") }
    /// The marker of a remote filled by ``SampleRemote``.
    var sampleMarker: FilePath { stateDirectory.appending("sample-remote") }

    /// A container's top-level directory.
    func directory(of container: ContainerID) -> FilePath { root.appending(container.rawValue) }
}
