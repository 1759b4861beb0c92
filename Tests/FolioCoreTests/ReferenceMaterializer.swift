import FolioCore
import FolioTesting

/// Downloads a placeholder's whole content in the call that asks for it (the core's begin and finish around one
/// fetch): a read waits for all of it, and nothing runs in the background, so a reference-model sequence replays
/// the same way every time.
struct ReferenceMaterializer: ContentMaterializing {
    /// The core whose placeholders it fills.
    let fileSystem: FolioFileSystem
    /// Where the content comes from.
    let provider: InMemoryProvider

    func materialize(_ ino: UInt64) async throws(FolioError) {
        guard let ticket = try fileSystem.beginMaterialization(ino) else { return }
        do {
            let item = try await provider.fetchContents(
                of: ticket.itemID, in: ticket.container, version: ticket.version, to: ticket.path) { _ in }
            fileSystem.finishMaterialization(ticket, result: .success(item))
        } catch {
            fileSystem.finishMaterialization(ticket, result: .failure(FolioError(error)))
            throw FolioError(error)
        }
    }
}
