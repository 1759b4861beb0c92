import FolioCore
import Foundation
import Glibc
import SystemPackage

/// Adopting an existing folder of documents as a remote (``RemoteLayout+Adopted``): it becomes the Drive
/// container as it is, and Folio keeps everything of its own in the folder's `.folio/`.
extension LocalProvider {
    /// Makes `root` a remote the way `folio mount --remote` does: a remote (made by Folio or adopted) stays as
    /// it is, a new or empty folder becomes a new remote (``initialize(at:)``), and a folder holding documents
    /// is adopted (``adopt(at:)``). Refusals are `.invalidArgument` with the reason.
    public static func prepareRemote(at root: FilePath) throws {
        if isRemote(at: root) { return }
        if try holdsDocuments(root) {
            try adopt(at: root)
        } else {
            try initialize(at: root)
        }
    }

    /// Adopts the folder of documents at `root`: it becomes a remote whose Drive container is the folder itself.
    /// Nothing is written among its items: only `.folio/` is made (manifest, lock, staging). A remote already
    /// (adopted, or made by Folio) is left as it is. Refused with `.invalidArgument` (the message says why):
    /// see ``adoptionRefusal(of:)``, and a `.folio` there that is not Folio's.
    public static func adopt(at root: FilePath) throws {
        guard let status = try SystemCalls.statusIfPresent(root), status.kind == .directory else {
            throw FolioError.notDirectory("\(root) is not a folder")
        }
        if isRemote(at: root) { return }
        if let refusal = adoptionRefusal(of: root) { throw FolioError.invalidArgument(refusal) }
        let layout = RemoteLayout(root: root, isAdopted: true)
        try refuseForeignBookkeeping(layout)
        // Making `.folio` changes the folder's modification time: put it back, the folder is the user's.
        let before = status.modificationTime
        try SystemCalls.makeDirectories(layout.staging)
        try? SystemCalls.setModificationTime(root, before)
        // Under the lock and read again: another process may be adopting it (or making it a remote) right now.
        try RemoteLock(layout: layout).withExclusiveLock {
            if isRemote(at: root) { return }
            var manifest = RemoteManifest()
            manifest.upsert(.drive)
            manifest.remoteID = UUID().uuidString
            try manifest.save(to: layout.manifest)
        }
    }

    /// Why the folder at `root` cannot be adopted, or `nil` if it can: the root folder, the home folder itself
    /// and a folder inside another Folio remote are refused.
    public static func adoptionRefusal(of root: FilePath) -> String? {
        let canonical = canonicalPath(root)
        if canonical == FilePath("/") {
            return "/ cannot be adopted as a remote: choose a folder of documents (such as ~/Documents/archive)"
        }
        if homeFolders().contains(canonical) {
            return "\(root) is your home folder, which cannot be adopted as a remote: choose a folder of documents "
                + "inside it (such as ~/Documents)"
        }
        var ancestor = canonical
        while ancestor.removeLastComponent(), !ancestor.isEmpty {
            if isRemote(at: ancestor) {
                return "\(root) is inside the Folio remote \(ancestor): mount that remote instead"
            }
            if ancestor == FilePath("/") { break }
        }
        return nil
    }

    /// Whether `root` holds anything besides Folio's own names (a missing folder holds nothing).
    static func holdsDocuments(_ root: FilePath) throws -> Bool {
        guard try SystemCalls.statusIfPresent(root)?.kind == .directory else { return false }
        return try SystemCalls.directoryEntries(root).contains { $0 != ".folio" && !ItemName.isInternal($0) }
    }

    /// The names Folio keeps in `.folio/`.
    private static let bookkeepingNames: Set<String> = [
        "lock", "staging", "simulate.json", "symlink-ids.json", "item-ids.json", RemoteLayout.adoptedManifestName,
        "containers", "sample-remote", "journal",
    ]

    /// Refuses a `.folio` at the top of a folder to adopt that is not Folio's (not a folder, or holding other
    /// names): Folio would write its bookkeeping among someone else's files.
    private static func refuseForeignBookkeeping(_ layout: RemoteLayout) throws {
        guard let status = try SystemCalls.statusIfPresent(layout.stateDirectory) else { return }
        var foreign = status.kind != .directory
        if !foreign {
            foreign = try SystemCalls.directoryEntries(layout.stateDirectory).contains {
                !bookkeepingNames.contains($0) && !ItemName.isInternal($0)
            }
        }
        if foreign {
            throw FolioError.invalidArgument(
                "\(layout.stateDirectory) exists and is not Folio's: Folio keeps its own files there in an adopted "
                    + "folder; rename it and try again")
        }
    }

    /// The user's home folders (from `HOME` and the password database), canonical.
    private static func homeFolders() -> Set<FilePath> {
        var homes: Set<FilePath> = []
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty {
            homes.insert(canonicalPath(FilePath(home)))
        }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            homes.insert(canonicalPath(FilePath(String(cString: directory))))
        }
        return homes
    }

    /// The path with symlinks resolved, or as given (normalized) if it cannot be (it does not exist yet).
    public static func canonicalPath(_ path: FilePath) -> FilePath {
        guard let resolved = realpath(path.string, nil) else { return path.lexicallyNormalized() }
        defer { free(resolved) }
        return FilePath(String(cString: resolved))
    }
}
