import FolioCore
import FolioDaemon
import Foundation
import SystemPackage

extension MountCommand {
    /// What `--remote` names: a folder (its canonical path), or a WebDAV server with its account and trust
    /// settings, checked (``RemoteLocation/webDAVServer(url:user:password:caFile:insecure:)``) and with the
    /// password read from the file or the environment.
    func remoteLocation(_ remote: String) throws -> RemoteLocation {
        guard RemoteLocation.isAddress(remote) else { return .folder(FilePath(RuntimePaths.canonical(remote))) }
        do throws(FolioError) {
            var password: String?
            if let passwordFile {
                guard user != nil else { throw .invalidArgument("--password-file is the password of a --user NAME") }
                password = try PasswordFile.read(RuntimePaths.canonical(passwordFile))
            } else if user != nil, let variable = ProcessInfo.processInfo.environment[PasswordFile.environmentVariable],
                !variable.isEmpty
            {
                password = variable
            }
            if let user, password == nil {
                throw .invalidArgument(
                    "--user \(user) needs a password: --password-file FILE (chmod 600 FILE) or the environment "
                        + "variable \(PasswordFile.environmentVariable)")
            }
            // The daemon's children (the replay helper) have no use for it.
            if foreground { unsetenv(PasswordFile.environmentVariable) }
            return try .webDAVServer(
                url: remote, user: user, password: password, caFile: caFile.map(RuntimePaths.canonical),
                insecure: insecure)
        } catch {
            throw CLIError("\(error)")
        }
    }
}
