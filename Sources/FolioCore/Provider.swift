import SystemPackage

/// A backend that keeps documents: the local directory, WebDAV, S3.
///
/// Every call may fail with ``FolioError`` (`.offline`, `.providerFailure`, `.conflict`, `.notFound`,
/// `.nameNotStorable`, ...). Calls are cancellable through task cancellation.
public protocol Provider: Sendable {
    /// The containers the remote holds (the Drive container always among them).
    func listContainers() async throws -> [Container]

    /// Every item of a container (metadata only) and an anchor for ``changes(in:since:)``.
    func enumerateItems(in container: ContainerID) async throws -> (items: [RemoteItem], anchor: SyncAnchor)

    /// Changes in a container since `anchor`.
    func changes(in container: ContainerID, since anchor: SyncAnchor) async throws -> RemoteChanges

    /// Writes the content of a file to `destination` (created or truncated), calling `progress` with the
    /// number of bytes written so far. Fails with `.conflict` if the item's version is no longer `version`.
    func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem

    /// Creates an item; a retry of a create that already happened returns the existing item, with this content
    /// if the first attempt wrote other content and nobody changed it since (`template.retryTag`), otherwise
    /// `.conflict`.
    func createItem(_ template: RemoteItemTemplate, contents: FilePath?) async throws -> RemoteItem

    /// Creates several items, each as ``createItem(_:contents:)`` would, and answers for each, in order (one
    /// failing does not stop the others). A provider that can make them in one go (one request, one flush)
    /// makes a burst of small uploads much cheaper; the default makes them concurrently, one call each.
    func createItems(_ creations: [ItemCreation]) async -> [Result<RemoteItem, FolioError>]

    /// Changes an item's metadata and/or content. Fails with `.conflict` when the remote version is no longer
    /// `baseVersion` and content is sent (the remote change is never overwritten), unless it is the version
    /// `changes.retryTag` wrote (this writer's own earlier attempt).
    func modifyItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?
    ) async throws -> RemoteItem

    /// Deletes an item (a folder must be empty). Deleting an item that is already gone succeeds. A file no
    /// longer at `baseVersion` is a `.conflict` (a remote change is never deleted unseen), unless it is at the
    /// version `retryTag` wrote (see ``RemoteItemChanges/retryTag``); without a base version, a file is deleted
    /// only if `retryTag` wrote its current version (or if there is no tag either).
    func deleteItem(_ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?) async throws

    /// Push: a stream that yields soon after anything on the remote may have changed (several changes may
    /// come as one element), or `nil` if the provider can only be polled.
    func changeNotifications() -> AsyncStream<Void>?
}

extension Provider {
    /// Providers without push are polled.
    public func changeNotifications() -> AsyncStream<Void>? { nil }

    /// One ``createItem(_:contents:)`` call per create, all at once.
    public func createItems(_ creations: [ItemCreation]) async -> [Result<RemoteItem, FolioError>] {
        await withTaskGroup(of: (Int, Result<RemoteItem, FolioError>).self) { group in
            for (index, creation) in creations.enumerated() {
                group.addTask {
                    do {
                        return (index, .success(try await createItem(creation.template, contents: creation.contents)))
                    } catch {
                        return (index, .failure(FolioError(error)))
                    }
                }
            }
            var outcomes = [Result<RemoteItem, FolioError>](
                repeating: .failure(.interrupted("create")), count: creations.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes
        }
    }

    /// Deletes an item without a retry tag.
    public func deleteItem(_ id: ItemID, in container: ContainerID, baseVersion: String?) async throws {
        try await deleteItem(id, in: container, baseVersion: baseVersion, retryTag: nil)
    }
}
