/// The sync engine's bookkeeping of one filesystem: which uploads and deletes are in flight, which uploads left
/// their outcome unknown, which conflicts wait for their remote version, what waits for the user or for a passing
/// reason, which items are taken again outside a change set, and the upload epoch that makes an enumeration stale.
///
/// A value type that does no I/O (DESIGN.md §4, example 6): it lives in the core's state, under the core's lock,
/// beside the nodes it speaks of; its mutating methods change only the book and return the ``Action``s the caller
/// performs (ask for a refresh, wake the conflict fetcher, send a folder's time again). Not persisted: what a
/// restart needs of it is rebuilt from the stored nodes (``FolioFileSystem/init``).
struct SyncBook: Sendable {
    /// What the caller does after a change of the book.
    enum Action: Hashable, Sendable {
        /// Ask the poller for a refresh soon: an item is to be taken again outside any change set.
        case refreshSoon
        /// Wake the sync engine's conflict fetcher: a conflict's remote version is to be fetched.
        case fetchConflicts
        /// Send the time of folder `ino` again: a change of ours inside it landed, and the remote gave it a time
        /// of its own.
        case resendFolderTime(UInt64)
    }

    /// A change the remote refused in a way only the user can clear: the node's `dirtySequence` then, and why.
    struct HeldChange: Hashable, Sendable {
        /// The sequence of the change refused: held while the node's `dirtySequence` is still this one.
        var sequence: UInt64
        /// Why the remote refused it (for `folio status`).
        var reason: String
    }

    /// Items whose upload is in flight (by item id: an atomic save moves an id to another inode).
    private(set) var uploadsInFlight: Set<ItemID> = []
    /// Items whose remote delete is in flight.
    private(set) var deletesInFlight: Set<ItemID> = []
    /// Items whose last upload failed in a way that leaves its outcome unknown (the reply may have been lost
    /// after the provider made the change): a remote version change of theirs may be our own.
    private(set) var uncertainUploads: Set<ItemID> = []
    /// Conflicted items whose remote version the sync engine has to fetch (new conflicts, and conflicts whose
    /// remote side changed again); a conflict waiting for the user costs nothing.
    private(set) var conflictFetches: Set<ItemID> = []
    /// Folders whose time on the remote the item's next upload or delete changes besides its parent's by a
    /// create or new content (it leaves them, or is renamed in them): their own time is sent again once it lands.
    private(set) var foldersChanged: [ItemID: Set<UInt64>] = [:]
    /// Folders whose time was to be sent again while an upload of theirs ran: that upload does not clear
    /// `timeDirty`.
    private(set) var folderTimesResentInFlight: Set<ItemID> = []
    /// Whether upload work was held back since the uploader last asked because its content could not be opened
    /// for a passing reason.
    private(set) var uploadsDeferred = false
    /// How many times upload work was held back that way.
    private(set) var deferredUploadCount = 0
    /// Items whose remote state is taken again outside any change set, by container (a name still taken, a save
    /// still undecided, a delete of ours the remote refused because the item changed there, ...).
    private(set) var itemsToTakeAgain: [ItemID: ContainerID] = [:]
    /// Why the last upload of a node failed in a way that clears by itself, and what it waits for (for
    /// `folio status`), until an upload of it ends otherwise.
    private(set) var uploadWaits: [UInt64: String] = [:]
    /// Folder creates and metadata-only changes the remote refused in a way only the user can clear (they have
    /// no content state to make `failed`): not uploaded again while the node's `dirtySequence` is the one held,
    /// until `folio retry`, a new change, or the next mount.
    private(set) var uploadsNeedingUser: [UInt64: HeldChange] = [:]
    /// Whether a merge left a remote change to an item a save holds for later (a refresh is asked for when the
    /// save's window ends).
    private(set) var remoteChangesWaitForSave = false
    /// Names that a pending delete frees on the remote (where the deleted item was when it was removed here), by
    /// location, and the other way round: an upload that puts another item at such a name waits for that delete
    /// (an effect with a dependency, not a clash that is retried). Forgotten once the delete is no longer pending.
    private(set) var namesFreedByDeletes: [ExternalReference.Location: ItemID] = [:]
    private var freedNameOfDelete: [ItemID: ExternalReference.Location] = [:]
    /// Bumped by every upload that changed the provider, and by every merge after which an older enumeration
    /// must not be applied: an enumeration taken before a bump is stale.
    private(set) var remoteEpoch: UInt64 = 0

    /// An empty book.
    init() {}

    // MARK: Uploads and deletes

    /// Whether an upload or a delete of `id` is in flight.
    func isInFlight(_ id: ItemID) -> Bool {
        uploadsInFlight.contains(id) || deletesInFlight.contains(id)
    }

    /// The uploader took an upload (create or modify) of `id`.
    mutating func uploadStarted(_ id: ItemID) {
        uploadsInFlight.insert(id)
    }

    /// The uploader took the remote delete of `id`.
    mutating func deleteStarted(_ id: ItemID) {
        deletesInFlight.insert(id)
    }

    /// The upload of `id` ended (whatever its outcome). Returns whether the item's folder time was asked to be
    /// sent again while it ran (then the upload does not clear `timeDirty`).
    mutating func uploadEnded(_ id: ItemID) -> Bool {
        uploadsInFlight.remove(id)
        return folderTimesResentInFlight.remove(id) != nil
    }

    /// The remote delete of `id` ended (whatever its outcome).
    mutating func deleteEnded(_ id: ItemID) {
        deletesInFlight.remove(id)
    }

    /// The delete of `id`, queued now, frees `location` on the remote: what another item puts there waits for it.
    mutating func deleteFrees(_ location: ExternalReference.Location, of id: ItemID) {
        if let earlier = freedNameOfDelete.updateValue(location, forKey: id), earlier != location,
           namesFreedByDeletes[earlier] == id {
            namesFreedByDeletes[earlier] = nil
        }
        if let other = namesFreedByDeletes.updateValue(id, forKey: location), other != id {
            freedNameOfDelete[other] = nil
        }
    }

    /// The delete an upload of `id` to `location` waits for: the pending delete of another item that had the
    /// name (`isPending` says whether a delete of an item is still queued or in flight), or `nil`. A delete that
    /// is no longer pending is forgotten.
    mutating func deleteFreeing(
        _ location: ExternalReference.Location, for id: ItemID, isPending: (ItemID) -> Bool
    ) -> ItemID? {
        guard let other = namesFreedByDeletes[location], other != id else { return nil }
        if isPending(other) { return other }
        namesFreedByDeletes[location] = nil
        freedNameOfDelete[other] = nil
        return nil
    }

    /// The delete of `id` is no longer pending (it landed, or was dropped): the name it freed is forgotten.
    mutating func deleteNoLongerPending(_ id: ItemID) {
        guard let location = freedNameOfDelete.removeValue(forKey: id) else { return }
        if namesFreedByDeletes[location] == id { namesFreedByDeletes[location] = nil }
    }

    /// An upload or delete of `id` landed on the remote: the folders whose time it changed have theirs sent
    /// again.
    mutating func changeLanded(_ id: ItemID) -> [Action] {
        guard let folders = foldersChanged.removeValue(forKey: id) else { return [] }
        return folders.sorted().map { .resendFolderTime($0) }
    }

    /// The next upload or delete of `id` changes the remote time of `folders` (it leaves them, or is renamed in
    /// them).
    mutating func recordFoldersChanged(_ folders: [UInt64], by id: ItemID) {
        foldersChanged[id, default: []].formUnion(folders)
    }

    /// The time of folder `id` is to be sent again. Returns whether an upload of the folder is in flight (it
    /// will not have sent it: the folder keeps `timeDirty` when it ends).
    mutating func folderTimeResent(_ id: ItemID) -> Bool {
        guard uploadsInFlight.contains(id) else { return false }
        folderTimesResentInFlight.insert(id)
        return true
    }

    /// Whether folder `ino`'s remote time may be the echo of an upload or delete in flight of an item that left
    /// it or was renamed in it.
    func mayEchoFolderTime(_ ino: UInt64) -> Bool {
        for id in deletesInFlight where foldersChanged[id]?.contains(ino) ?? false { return true }
        for id in uploadsInFlight where foldersChanged[id]?.contains(ino) ?? false { return true }
        return false
    }

    /// The outcome of an upload of node `ino` (item `id`) is recorded: `uncertain` if it failed in a way that
    /// leaves unknown whether the provider made the change. Why it waited, or was held for the user, is
    /// forgotten (the caller records the new reason, if any).
    mutating func uploadOutcomeRecorded(_ id: ItemID, ino: UInt64, uncertain: Bool) {
        if uncertain {
            uncertainUploads.insert(id)
        } else {
            uncertainUploads.remove(id)
        }
        uploadWaits[ino] = nil
        uploadsNeedingUser[ino] = nil
    }

    /// After a restart: an upload of `id` may have landed unseen (the daemon died while it ran, or before its
    /// outcome was stored).
    mutating func uploadMayHaveLanded(_ id: ItemID) {
        uncertainUploads.insert(id)
    }

    /// The upload of node `ino` failed in a way that clears by itself: `reason` says what it waits for.
    mutating func uploadWaits(_ ino: UInt64, reason: String) {
        uploadWaits[ino] = reason
    }

    /// The change of node `ino` at `sequence` was refused by the remote until the user acts.
    mutating func holdForUser(_ ino: UInt64, sequence: UInt64, reason: String) {
        uploadsNeedingUser[ino] = HeldChange(sequence: sequence, reason: reason)
    }

    /// Whether the change of node `ino` at `sequence` is held for the user.
    func isHeldForUser(_ ino: UInt64, sequence: UInt64) -> Bool {
        uploadsNeedingUser[ino]?.sequence == sequence
    }

    /// Releases the change of node `ino` held for the user (`folio retry`, a mount): returns what was held.
    mutating func releaseHeld(_ ino: UInt64) -> HeldChange? {
        uploadsNeedingUser.removeValue(forKey: ino)
    }

    /// Upload work was held back because its content could not be opened for a passing reason.
    mutating func uploadDeferred() {
        uploadsDeferred = true
        deferredUploadCount += 1
    }

    /// Whether upload work was held back since the last call (the uploader tries again after a backoff).
    mutating func takeDeferredUploads() -> Bool {
        defer { uploadsDeferred = false }
        return uploadsDeferred
    }

    // MARK: Conflicts

    /// The remote changed `id` while a local version was pending: its remote version is to be fetched.
    mutating func conflictFound(_ id: ItemID) -> [Action] {
        conflictFetches.insert(id)
        return [.fetchConflicts]
    }

    /// The remote version of conflicted `id` was fetched, or the conflict ended: nothing to fetch.
    mutating func conflictSettled(_ id: ItemID) {
        conflictFetches.remove(id)
    }

    // MARK: Remote changes

    /// The item `id` of `container` is to be taken again outside any change set. A merge that asks for it needs
    /// no refresh (the poll running takes items again at its end); anything else performs the action returned.
    @discardableResult
    mutating func takeAgain(_ id: ItemID, in container: ContainerID) -> [Action] {
        itemsToTakeAgain[id] = container
        return [.refreshSoon]
    }

    /// The item `id` is being taken again (a merge may ask for it once more).
    mutating func takingAgain(_ id: ItemID) {
        itemsToTakeAgain[id] = nil
    }

    /// A remote change to `id` waits until an editor's save of it is decided; the item is taken again then.
    mutating func remoteChangeWaitsForSave(_ id: ItemID, in container: ContainerID) {
        remoteChangesWaitForSave = true
        itemsToTakeAgain[id] = container
    }

    /// Whether a remote change waited for a save since the last call (a refresh is asked for then).
    mutating func takeRemoteChangesWaitingForSave() -> Bool {
        defer { remoteChangesWaitForSave = false }
        return remoteChangesWaitForSave
    }

    /// The item `id` took another id (a replace on the remote): what the book knew of the old one is forgotten.
    mutating func itemReplaced(_ id: ItemID) {
        uncertainUploads.remove(id)
        conflictFetches.remove(id)
    }

    /// The provider changed by an upload of ours, or a merge made older enumerations stale: any enumeration
    /// taken before now is set aside.
    mutating func remoteChanged() {
        remoteEpoch += 1
    }

    /// Whether an enumeration taken at `epoch` (``remoteEpoch`` then) is still current.
    func isCurrent(_ epoch: UInt64) -> Bool {
        epoch == remoteEpoch
    }
}
