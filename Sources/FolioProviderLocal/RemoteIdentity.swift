import FolioCore
import Foundation
import Synchronization
import SystemPackage

/// Recognizes the remote folder a provider was opened on (DESIGN.md §2 "The remote"): a folder that is missing,
/// unreadable, has no manifest (an unmounted share leaves an empty folder behind) or holds another remote (its
/// manifest has another ``RemoteManifest/remoteID``) makes the provider *offline* with the reason, so nothing is
/// taken for deleted and no upload is failed because of it. It comes back on its own when the folder does.
///
/// A check costs one `lstat` of the manifest while the manifest stays the file it was (the manifest is read
/// again only when its status changes).
final class RemoteIdentity: Sendable {
    /// The remote folder.
    let root: FilePath
    /// Its manifest.
    private let manifest: FilePath
    /// The id of the remote, from its manifest when the provider was opened.
    let remoteID: String
    /// How the manifest is named in messages (`.folio-remote.json`, or `.folio/manifest.json` in an adopted folder).
    private let manifestName: String
    /// The status of the manifest when it last matched.
    private let matched = Mutex<FileStatus?>(nil)

    /// The identity of the remote at `layout`, whose manifest has `remoteID`.
    init(layout: RemoteLayout, remoteID: String) {
        root = layout.root
        manifest = layout.manifest
        manifestName = layout.isAdopted ? ".folio/\(RemoteLayout.adoptedManifestName)" : ".folio-remote.json"
        self.remoteID = remoteID
    }

    /// Fails with `.offline` (saying why) unless the remote folder is there and is still this remote.
    /// `operation` names the provider call in the error.
    func check(_ operation: String) throws(FolioError) {
        let status: FileStatus?
        do {
            status = try SystemCalls.statusIfPresent(manifest)
        } catch {
            throw .offline("\(operation): the remote folder \(root) cannot be read (\(error))")
        }
        guard let status else {
            if (try? SystemCalls.statusIfPresent(root)) == nil {
                throw .offline("\(operation): the remote folder \(root) is missing")
            }
            throw .offline(
                "\(operation): \(root) is not the remote any more (no \(manifestName): a share that is not "
                    + "mounted, or a folder put in its place?)")
        }
        if matched.withLock({ $0 == status }) { return }
        let found: RemoteManifest?
        do {
            found = try RemoteManifest.load(from: manifest)
        } catch {
            throw .offline("\(operation): the manifest of the remote \(root) cannot be read (\(error))")
        }
        guard let foundID = found?.remoteID, foundID == remoteID else {
            throw .offline(
                "\(operation): \(root) holds another remote (id \(found?.remoteID ?? "none"), expected \(remoteID))")
        }
        matched.withLock { $0 = status }
    }

    /// The error of a provider call that failed with `error`: `.offline` if the remote folder went away or was
    /// replaced meanwhile (a path that vanished is then no deletion), `error` otherwise.
    func explain(_ error: any Error, _ operation: String) -> FolioError {
        let folioError = FolioError(error)
        if case .offline = folioError { return folioError }
        return recheck(operation) ?? folioError
    }

    /// Looks at the remote folder afresh (the manifest read again): the `.offline` error if it is not this
    /// remote now, `nil` if it is.
    func recheck(_ operation: String) -> FolioError? {
        matched.withLock { $0 = nil }
        do {
            try check(operation)
            return nil
        } catch {
            return error
        }
    }
}
