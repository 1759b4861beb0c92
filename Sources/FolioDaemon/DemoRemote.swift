import FolioProviderLocal
import SystemPackage

/// The sample remote `folio demo` mounts: three containers of documents in a remote folder.
public enum DemoRemote {
    /// Fills `root` with the sample remote, making it a remote first if it is not one (a folder that holds
    /// something else is refused); does nothing if it holds the sample already.
    public static func create(at root: FilePath) throws {
        try SampleRemote.create(at: root)
    }
}
