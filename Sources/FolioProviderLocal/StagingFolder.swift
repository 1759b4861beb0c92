import FolioCore
import Foundation
import Glibc
import Synchronization
import SystemPackage

/// The remote's folder for uploads on their way (`DIR/.folio/staging`): it makes the files they are copied into.
///
/// Where the filesystem can, such a file has no name until it is put into place (`O_TMPFILE`, then `linkat`):
/// nobody can ever see it half-made, a crash leaves nothing behind, and a create costs one entry in its folder
/// instead of an entry in the staging folder, a rename out of it and an entry in its folder (the staging folder's
/// lock was also where concurrent uploads queued). Elsewhere it is a named file of the staging folder, renamed
/// into place.
final class StagingFolder: Sendable {
    /// The folder.
    let path: FilePath
    /// Whether unnamed files may work here: cleared by the first refusal (then no more tries).
    private let unnamedFilesWork: Atomic<Bool>

    /// The staging folder at `path` (which exists); `unnamedFiles: false` never tries unnamed files.
    init(_ path: FilePath, unnamedFiles: Bool = true) {
        self.path = path
        unnamedFilesWork = Atomic(unnamedFiles)
    }

    /// Whether the files made last were unnamed.
    var makesUnnamedFiles: Bool { unnamedFilesWork.load(ordering: .relaxed) }

    /// A new, empty file, open for reading and writing: unnamed where the filesystem can make one, else named
    /// `.folio-<prefix>-<uuid>`.
    func newFile(_ prefix: String) throws -> StagedUpload {
        if unnamedFilesWork.load(ordering: .relaxed) {
            if let descriptor = try SystemCalls.makeUnnamedFile(in: path) {
                return StagedUpload(path: nil, staging: path, descriptor: descriptor)
            }
            // Not on this filesystem, or not with this kernel: named files from now on.
            unnamedFilesWork.store(false, ordering: .relaxed)
        }
        let named = path.appending(ItemName.internalPrefix + prefix + "-" + UUID().uuidString)
        do {
            let descriptor = try FileDescriptor.open(
                named, .readWrite, options: [.create, .exclusiveCreate, .closeOnExec], permissions: .ownerReadWrite)
            return StagedUpload(path: named, staging: path, descriptor: descriptor)
        } catch let error as Errno {
            throw FolioError.system(error, "create \(named)")
        }
    }

    /// Removes named uploads left by a process that died more than a day ago (younger ones may belong to another
    /// provider on the same remote, still at work). Unnamed ones never outlive their process.
    func removeAbandonedUploads() {
        guard let names = try? SystemCalls.directoryEntries(path) else { return }
        let dayAgo = Timestamp.now().seconds - 86_400
        for name in names where ItemName.isInternal(name) {
            let file = path.appending(name)
            // By change time: a staged file carries its document's modification time, however old.
            if let status = try? SystemCalls.statusIfPresent(file), status.changeTime.seconds < dayAgo {
                SystemCalls.removeFileQuietly(file)
            }
        }
    }
}
