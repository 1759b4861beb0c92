import FolioCore
import SystemPackage

/// A fake provider for uploader tests: an empty remote with nothing to list or fetch; a conformer implements only
/// the upload calls it tests.
protocol UploadOnlyProvider: Provider {}

extension UploadOnlyProvider {
    func listContainers() async throws -> [Container] { [.drive] }

    func enumerateItems(in container: ContainerID) async throws -> (items: [RemoteItem], anchor: SyncAnchor) {
        ([], SyncAnchor("0"))
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
