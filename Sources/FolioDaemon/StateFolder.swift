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
    /// What the user should hear about the folder (that its mode was tightened), or `nil`.
    public let notice: String?

    /// The files Folio keeps at the top of a state folder, made private (0600) at every mount whatever mode
    /// they were left with.
    static let privateFiles = [
        "metadata.sqlite", "metadata.sqlite-wal", "metadata.sqlite-shm", "metadata.sqlite-journal", "folio.log",
        "daemon.lock", "bookmark.key",
    ]

    /// Creates the folder (0700, with its parents) if it is missing; one that others could read or enter is
    /// made 0700, with a notice, and Folio's files in it 0600: names, tags and attributes of the user's
    /// documents are in them.
    public static func prepare(at path: FilePath) throws(FolioError) -> StateFolder {
        let existed = FileManager.default.fileExists(atPath: path.string)
        do {
            try FileManager.default.createDirectory(
                atPath: path.string, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io("cannot create state folder \(path): \(error)")
        }
        var info = stat()
        guard lstat(path.string, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw .notDirectory("the state folder \(path) is not a folder")
        }
        var notice: String?
        if info.st_mode & 0o7777 != 0o700 {
            guard chmod(path.string, 0o700) == 0 else {
                throw .system(.init(rawValue: errno), "make the state folder \(path) private (chmod 700)")
            }
            if existed {
                let mode = String(info.st_mode & 0o7777, radix: 8)
                notice = "the state folder \(path) was open to others (mode \(mode)): made it private (700)"
            }
        }
        for name in privateFiles {
            let file = path.appending(name).string
            if lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0 {
                chmod(file, 0o600)
            }
        }
        return StateFolder(path: path, existed: existed, notice: notice)
    }

    /// After a failed mount: removes the folder if this mount created it and no daemon uses it (one started
    /// at the same time that did come up keeps it).
    public func discardIfCreated() {
        guard !existed else { return }
        _ = StateLock.whileUnused(path) { try? FileManager.default.removeItem(atPath: path.string) }
    }
}
