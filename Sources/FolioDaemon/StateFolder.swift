import FolioCore
import Foundation
import SystemPackage

/// The state folder a mount is about to use. It remembers whether the folder existed, so a mount that fails
/// removes only a folder it created itself, never one that was there before.
public struct StateFolder: Sendable {
    /// The folder.
    public let path: FilePath
    /// Whether the folder was there before this mount created it.
    public let existed: Bool

    /// Creates the folder (0700, with its parents) if it is missing.
    public static func prepare(at path: FilePath) throws(FolioError) -> StateFolder {
        let existed = FileManager.default.fileExists(atPath: path.string)
        do {
            try FileManager.default.createDirectory(
                atPath: path.string, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io("cannot create state folder \(path): \(error)")
        }
        return StateFolder(path: path, existed: existed)
    }

    /// After a failed mount: removes the folder if this mount created it and no daemon uses it (one started
    /// at the same time that did come up keeps it).
    public func discardIfCreated() {
        guard !existed else { return }
        _ = StateLock.whileUnused(path) { try? FileManager.default.removeItem(atPath: path.string) }
    }
}
