import FolioCore
import Foundation
import SystemPackage

extension RuntimePaths {
    /// The runtime folder, checked to be the user's own: a real folder (no symbolic link) owned by this user with
    /// mode 0700. With `creating`, a missing one is made (0700). Anything else is refused with what to do, since
    /// whoever owns the folder could put a listener of theirs where the control socket should be.
    public static func privateRuntimeDirectory(creating: Bool) throws(FolioError) -> FilePath {
        let directory = runtimeDirectory
        var info = stat()
        if lstat(directory.string, &info) != 0 {
            guard errno == ENOENT else {
                throw .system(.init(rawValue: errno), "runtime folder \(directory)")
            }
            guard creating else { throw .notFound("no runtime folder \(directory): no Folio daemon runs") }
            let parent = directory.removingLastComponent().string
            if !FileManager.default.fileExists(atPath: parent) {
                try? FileManager.default.createDirectory(
                    atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            if mkdir(directory.string, 0o700) == 0 {
                chmod(directory.string, 0o700)  // whatever the umask
            } else if errno != EEXIST {
                throw .system(.init(rawValue: errno), "create the runtime folder \(directory)")
            }
            guard lstat(directory.string, &info) == 0 else {
                throw .system(.init(rawValue: errno), "runtime folder \(directory)")
            }
        }
        if let problem = problem(with: info) {
            throw .accessDenied(
                "the runtime folder \(directory) is not safe for Folio's control socket: \(problem). Another "
                    + "user could take over the socket. Remove \(directory) (Folio makes its own, 0700) or set "
                    + "XDG_RUNTIME_DIR to a private folder of yours, then try again")
        }
        return directory
    }

    /// What makes a folder with these `lstat` results unsafe as a runtime folder, or `nil` if it is safe.
    static func problem(with info: stat) -> String? {
        let mode = info.st_mode & 0o777  // set-group-id and sticky bits give nobody else a way in
        if info.st_mode & S_IFMT == S_IFLNK { return "it is a symbolic link" }
        if info.st_mode & S_IFMT != S_IFDIR { return "it is not a folder" }
        if info.st_uid != geteuid() {
            return "it belongs to \(userName(info.st_uid)), not to you (\(userName(geteuid())))"
        }
        if mode != 0o700 { return "its mode is \(String(mode, radix: 8)), not 700" }
        return nil
    }

    /// `name (uid N)`, or `uid N` for a user the password database does not know.
    public static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "\(String(cString: name)) (uid \(uid))"
    }
}
