import FolioCore
import FolioProviderLocal
import SystemPackage

extension Daemon {
    /// Refuses a remote folder that overlaps the mount or the state (`.invalidArgument`, saying which): the
    /// mountpoint inside the remote (the provider would walk into its own mount) or the remote inside the
    /// mountpoint, and the state folder inside the remote (Folio's own files would become documents).
    func refuseOverlap(remote: FilePath) throws(FolioError) {
        let remotePath = LocalProvider.canonicalPath(remote)
        let mountpoint = LocalProvider.canonicalPath(configuration.mountpoint)
        if mountpoint.starts(with: remotePath) {
            throw .invalidArgument(
                "the mountpoint \(configuration.mountpoint) is inside the remote folder \(remote): choose a "
                    + "mountpoint outside it")
        }
        if remotePath.starts(with: mountpoint) {
            throw .invalidArgument(
                "the remote folder \(remote) is inside the mountpoint \(configuration.mountpoint): choose a "
                    + "mountpoint outside it")
        }
        if LocalProvider.canonicalPath(configuration.stateDirectory).starts(with: remotePath) {
            throw .invalidArgument(
                "the state folder \(configuration.stateDirectory) is inside the remote folder \(remote): choose "
                    + "one outside it (--state)")
        }
    }
}
