import FolioCore
import Foundation
import SystemPackage

/// Where Folio keeps per-user runtime and state files.
public enum RuntimePaths {
    /// `$XDG_RUNTIME_DIR/folio`, or `/tmp/folio-UID` when that is unset.
    public static var runtimeDirectory: FilePath {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return FilePath(runtime).appending("folio")
        }
        return FilePath("/tmp/folio-\(getuid())")
    }

    /// The user's home folder: `$HOME`, else the password database's.
    public static var home: String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        return NSHomeDirectory()
    }

    /// `$XDG_STATE_HOME/folio` (default `~/.local/state/folio`).
    public static var stateHome: FilePath {
        if let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"], !state.isEmpty {
            return FilePath(state).appending("folio")
        }
        return FilePath(home).appending(".local/state/folio")
    }

    /// The canonical absolute form of `path` (symlinks resolved when it exists).
    public static func canonical(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        if let resolved = realpath(absolute, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return URL(fileURLWithPath: absolute).standardized.path
    }

    /// A short stable name derived from a path (FNV-1a), for socket and state folder names.
    public static func key(for path: String) -> String {
        let hash = StableHash.fnv1a(path)
        let base = (path as NSString).lastPathComponent.filter { $0.isLetter || $0.isNumber || $0 == "-" }
        return "\(base.prefix(32))-\(String(hash, radix: 16))"
    }

    /// The control socket of the mount at `mountpoint` (canonical path).
    public static func controlSocket(forMountpoint mountpoint: String) -> FilePath {
        runtimeDirectory.appending("\(key(for: mountpoint)).sock")
    }

    /// The default state folder for a remote: a folder's canonical path, or a server's address (`user` the
    /// account on it, for a server: two accounts never share a state).
    public static func defaultStateDirectory(forRemote remote: String, user: String? = nil) -> FilePath {
        guard RemoteLocation.isAddress(remote) else { return stateHome.appending(key(for: remote)) }
        return stateHome.appending(key(forAddress: remote, user: user))
    }

    /// A short stable folder name for a server's address: `webdav-HOST-LAST` (only letters, digits, `-` and
    /// `.`; the last name of the address's path) and a hash of the address (scheme and host in lower case, the
    /// path ending with `/`) and the account.
    static func key(forAddress address: String, user: String?) -> String {
        var normal = address
        var host = ""
        var last = ""
        if var components = URLComponents(string: address) {
            let scheme = components.scheme?.lowercased()
            let lowerHost = components.host?.lowercased()
            let path = components.path
            components.scheme = scheme
            components.host = lowerHost
            if !path.hasSuffix("/") { components.path = path + "/" }
            normal = components.string ?? address
            host = safeName(lowerHost ?? "")
            last = safeName(path.split(separator: "/").last.map(String.init) ?? "")
        }
        let hash = String(StableHash.fnv1a((user.map { $0 + "@" } ?? "") + normal), radix: 16)
        return (["webdav", host, last].filter { !$0.isEmpty } + [hash]).joined(separator: "-")
    }

    /// At most 32 of the ASCII letters, digits, `-` and `.` of `text`.
    private static func safeName(_ text: String) -> String {
        String(text.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }.prefix(32))
    }
}
