import FolioCore
import SystemPackage

/// A fake provider for uploader tests: an empty remote with nothing to list or fetch; a conformer implements only
/// the upload calls it tests.
protocol UploadOnlyProvider: Provider {}

extension UploadOnlyProvider {
    func listContainers() async throws -> [Container] { [.drive] }

    func currentAnchor(in container: ContainerID) async throws -> SyncAnchor { SyncAnchor("0") }

    func enumerateFolder(
        _ folder: ItemID?, in container: ContainerID, from cursor: PageCursor?, pageSize: Int
    ) async throws -> FolderPage {
        FolderPage(items: [], next: nil)
    }

    func item(_ id: ItemID, in container: ContainerID) async throws -> RemoteItem {
        throw FolioError.notFound("\(id)")
    }

    func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, range: Range<Int64>, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        throw FolioError.notFound("\(id)")
    }

    func changes(in container: ContainerID, since anchor: SyncAnchor) async throws -> RemoteChanges {
        RemoteChanges(updated: [], deleted: [], anchor: anchor, isFullEnumeration: true)
    }

    func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem {
        throw FolioError.notFound("\(id)")
    }
}
