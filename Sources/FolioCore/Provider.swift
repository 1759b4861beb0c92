import SystemPackage

/// A backend that keeps documents: the local directory, WebDAV, S3.
///
/// Every call may fail with ``FolioError`` (`.offline`, `.providerFailure`, `.conflict`, `.notFound`,
/// `.nameNotStorable`, ...). Calls are cancellable through task cancellation.
public protocol Provider: Sendable {
    /// The containers the remote holds (the Drive container always among them).
    func listContainers() async throws -> [Container]

    /// Creates a container on the remote (its folder and its entry, with display name and visibility, in the
    /// remote's list of containers), so that every device lists it from now on. A container that exists is
    /// left as it is and returned as the remote has it (two devices creating one app's container at once get
    /// one container). `.notSupported` if the provider cannot make containers.
    func createContainer(_ container: Container) async throws -> Container

    /// The container's position in its change history now: ``changes(in:since:)`` from this anchor reports every
    /// change made after the call. A client takes it before it enumerates, so a change made while it enumerates
    /// is reported by the next ``changes(in:since:)`` even when the pages missed it.
    func currentAnchor(in container: ContainerID) async throws -> SyncAnchor

    /// One page of the children of `folder` (`nil` or the container's root id: the container's root), in a
    /// stable order; `cursor` `nil` asks for the first page, a page's ``FolderPage/next`` for the one after it.
    ///
    /// The contract (File Provider's enumerator): a page holds at most `pageSize` items, and only the last
    /// page (``FolderPage/next`` `nil`) may be empty. Every child that exists, unchanged in place, from the
    /// first page to the last is listed exactly once; a child created, deleted, renamed or moved meanwhile may
    /// be listed or not, and ``changes(in:since:)`` from an anchor taken before the first page reports it. A
    /// cursor the provider can no longer continue from fails with `.anchorExpired` (list the folder again);
    /// a folder that is gone is `.notFound`, a file `.notDirectory`. Cost: the folder's children, never the
    /// rest of the remote.
    func enumerateFolder(
        _ folder: ItemID?, in container: ContainerID, from cursor: PageCursor?, pageSize: Int
    ) async throws -> FolderPage

    /// The changes in a container since `anchor`, at a cost in proportion to what changed (not to the size
    /// of the remote).
    ///
    /// The contract: every item created, or changed in content or metadata, or renamed or moved within the
    /// container since `anchor` is in ``RemoteChanges/updated`` with its state now (a change may be reported
    /// more than once, or an unchanged item now and then: applying changes is idempotent); every item deleted
    /// or moved out of the container is in ``RemoteChanges/deleted`` (a deleted folder's descendants are
    /// gone too, listed or not). ``RemoteChanges/moreComing`` asks the caller to call again at once from the
    /// new anchor. An anchor the provider can no longer answer for (its history was trimmed, or the anchor is
    /// another remote's) fails with `.anchorExpired`: the caller lists again what it knows and keeps every
    /// local change.
    func changes(in container: ContainerID, since anchor: SyncAnchor) async throws -> RemoteChanges

    /// Writes the content of a file to `destination` (created or truncated), calling `progress` with the
    /// number of bytes written so far. Fails with `.conflict` if the item's version is no longer `version`.
    func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem

    /// Writes the bytes `range` of version `version` of a file into `destination` at the same offsets (the file
    /// is created if missing, never truncated; bytes outside the range are left as they are); a range past the
    /// end is cut at the file's size. `progress` gets the number of bytes of the range written so far. Fails
    /// with `.conflict` if the item's version is no longer `version`: one open never mixes two versions.
    func fetchContents(
        of id: ItemID, in container: ContainerID, version: String, range: Range<Int64>, to destination: FilePath,
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> RemoteItem

    /// Whether the bytes a ranged ``fetchContents(of:in:version:range:to:progress:)`` has reported through
    /// `progress` are final as soon as they are reported: written in order from the range's start, and of the
    /// version asked for (checked before the first byte was written), so readers may use them before the call
    /// returns. A provider that checks the version after copying says `false` (the default): its bytes count only
    /// once the call succeeded.
    var reportsFinalBytesInOrder: Bool { get }

    /// What this remote cannot do that users of it should know, one sentence each, for `folio status` (a WebDAV
    /// server that keeps no dead properties, or ignores conditional requests); `nil` if it cannot tell yet (asked
    /// again after the next look at the remote).
    func limitations() async -> [String]?

    /// The metadata of one item now; `.notFound` if the container no longer has it.
    func item(_ id: ItemID, in container: ContainerID) async throws -> RemoteItem

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
    /// `changes.retryTag` wrote (this writer's own earlier attempt). A change without content is made whatever
    /// the version; when a file was no longer at `baseVersion` (nor at a version `changes.retryTag` wrote), the
    /// answer says so (``RemoteItem/changedElsewhere``), so the caller never takes the other writer's version
    /// for the content it has.
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
    /// come as one element), or `nil` if the provider can only be polled. A stream that ends means the provider
    /// replaced what pushes (its connection or watcher was lost): the caller asks again for the stream of now.
    func changeNotifications() -> AsyncStream<Void>?

    /// Keeps what was learned from version `description.version` of a file (its type, and its thumbnails, one PNG
    /// per size, when ``ContentDescription/thumbnails`` is `.made`) with the item, replacing what was kept for an
    /// earlier version. A description of a version the item no longer has is dropped without an error (the
    /// content changed meanwhile). `.notSupported` if the provider cannot keep them.
    func storeDescription(
        _ description: ContentDescription, thumbnails: [ThumbnailSize: [UInt8]], of id: ItemID,
        in container: ContainerID
    ) async throws

    /// The descriptions kept for the given items, whichever version each describes (the caller compares it with
    /// the version it knows); an item with none, or gone, is left out. One request for many items where the
    /// provider can.
    func descriptions(of ids: [ItemID], in container: ContainerID) async throws -> [ItemID: ContentDescription]

    /// The thumbnail of `size` kept for version `version` of an item; `nil` if none is kept for that version.
    func thumbnail(
        of id: ItemID, in container: ContainerID, version: String, size: ThumbnailSize
    ) async throws -> [UInt8]?
}

extension Provider {
    /// A provider that cannot make containers.
    public func createContainer(_ container: Container) async throws -> Container {
        throw FolioError.notSupported("this remote cannot make containers")
    }

    /// A provider that keeps no descriptions.
    public func storeDescription(
        _ description: ContentDescription, thumbnails: [ThumbnailSize: [UInt8]], of id: ItemID,
        in container: ContainerID
    ) async throws {
        throw FolioError.notSupported("this remote keeps no types or thumbnails")
    }

    /// None kept.
    public func descriptions(of ids: [ItemID], in container: ContainerID) async throws -> [ItemID: ContentDescription] {
        [:]
    }

    /// None kept.
    public func thumbnail(
        of id: ItemID, in container: ContainerID, version: String, size: ThumbnailSize
    ) async throws -> [UInt8]? {
        nil
    }

    /// Providers without push are polled.
    public func changeNotifications() -> AsyncStream<Void>? { nil }

    /// Bytes count once the ranged fetch that wrote them succeeded.
    public var reportsFinalBytesInOrder: Bool { false }

    /// Nothing to say.
    public func limitations() async -> [String]? { [] }

    /// One ``createItem(_:contents:)`` call per create, all at once.
    ///
    /// Each call puts its answer in its own place of a shared table; nothing comes back through the task group.
    /// (Returned as `(index, answer)` from the group's tasks, the index arrived as garbage in release builds of
    /// Swift 6.3.1 — pointer-like values, or small wrong ones that would give one item another's answer — while
    /// the answer itself was intact: the WebDAV benchmark's 1,000 creates found it; `scripts/release-smoke` runs
    /// that workload on the release binary in CI.)
    public func createItems(_ creations: [ItemCreation]) async -> [Result<RemoteItem, FolioError>] {
        let answers = CreateAnswers(count: creations.count)
        await withTaskGroup(of: Void.self) { group in
            for (index, creation) in creations.enumerated() {
                group.addTask {
                    do {
                        let item = try await createItem(creation.template, contents: creation.contents)
                        answers.set(index, .success(item))
                    } catch {
                        answers.set(index, .failure(FolioError(error)))
                    }
                }
            }
        }
        // An answer about another item than the one asked for is never taken (retried as interrupted).
        return zip(creations, answers.all).map { creation, answer in
            if case .success(let item) = answer, item.id != creation.template.id {
                let asked = creation.template.id
                return .failure(.interrupted("the answer to the create of \(asked) was about \(item.id)"))
            }
            return answer
        }
    }

    /// Deletes an item without a retry tag.
    public func deleteItem(_ id: ItemID, in container: ContainerID, baseVersion: String?) async throws {
        try await deleteItem(id, in: container, baseVersion: baseVersion, retryTag: nil)
    }

    /// The default page size of ``enumerateFolder(_:in:from:pageSize:)``.
    public static var defaultPageSize: Int { 1000 }

    /// Every page of a folder's children.
    public func enumerateWholeFolder(_ folder: ItemID?, in container: ContainerID) async throws -> [RemoteItem] {
        var items: [RemoteItem] = []
        var cursor: PageCursor?
        repeat {
            let page = try await enumerateFolder(folder, in: container, from: cursor, pageSize: Self.defaultPageSize)
            items += page.items
            cursor = page.next
        } while cursor != nil
        return items
    }

    /// Every item below `folder` (`nil`: the whole container), folder by folder, with an anchor taken before the
    /// first page. Costs the whole subtree: for pins, downloads, resyncs and tests, never for a change.
    public func enumerateSubtree(
        _ folder: ItemID? = nil, in container: ContainerID
    ) async throws -> (items: [RemoteItem], anchor: SyncAnchor) {
        let anchor = try await currentAnchor(in: container)
        var items: [RemoteItem] = []
        var folders: [ItemID?] = [folder]
        while let next = folders.popLast() {
            try Task.checkCancellation()
            let children = try await enumerateWholeFolder(next, in: container)
            items += children
            folders += children.filter { $0.kind == .directory }.map { Optional($0.id) }
        }
        return (items, anchor)
    }
}
