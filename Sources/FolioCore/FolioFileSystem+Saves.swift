import Foundation

/// Editors' saves that replace a document by a new file at its name (vim's and Emacs's backup by rename, an
/// unlink and a create): the new file takes over the document's identity. The decisions are the
/// ``SaveTracker``'s; this applies them to the tree.
extension FolioFileSystem {
    /// The file `node` (as it was before the change) left its name: renamed away or removed by `processID`.
    /// `references` are the locations of the references that opened it then.
    func recordDeparture(
        of node: Node, references: [ExternalReference.Location], processID: Int32, state: inout State
    ) {
        guard node.kind == .file, !node.itemID.isContainerRoot else { return }
        let departure = SaveTracker.Departure(
            itemID: node.itemID, processID: processID, deadline: 0, xattrs: node.xattrs, pinned: node.pinned,
            references: references)
        let deadline = state.saves.recordDeparture(
            departure, from: .init(parent: node.parent, name: node.name), now: saveNow)
        if let deadline { scheduleSaveWindowEnd(deadline, state: &state) }
    }

    /// The file `ino` was just put at its name by `processID`: ``takeOverDeparted(by:processID:state:)``, where a
    /// failure to store the takeover (the store failing) leaves the new file a new item, as it was.
    func takeOver(by ino: UInt64, processID: Int32, state: inout State) -> [ExternalReference] {
        do {
            return try takeOverDeparted(by: ino, processID: processID, state: &state)
        } catch {
            logger.error("a new file cannot take over the document that left its name: \(error)")
            return []
        }
    }

    /// The file `ino` was just put at its name by `processID` (created there, or renamed there onto no other
    /// file). If a document left that name moments ago by the same process, `ino` takes it over: the document's
    /// item id, provider version, attributes, pin and references; the node still holding the document (the
    /// backup the editor renamed it to) becomes a new item, and a delete of the document waiting for the
    /// provider is dropped. The provider then sees one modification of the document. Returns the references
    /// whose kernel entries now lead to `ino`.
    func takeOverDeparted(
        by ino: UInt64, processID: Int32, state: inout State
    ) throws(FolioError) -> [ExternalReference] {
        guard var arriving = state.nodes[ino], arriving.kind == .file, arriving.state.hasLocalContent else { return [] }
        let location = ExternalReference.Location(parent: arriving.parent, name: arriving.name)
        let now = saveNow
        guard let departure = state.saves.arrival(at: location, processID: processID, now: now) else { return [] }
        let itemID = departure.itemID
        if arriving.itemID == itemID {
            state.saves.tookOver(itemID)  // it came back to its name
            return []
        }
        // What the document is on the provider: as its node (renamed away) or its tombstone (removed) says.
        var remoteVersion: String?
        var remoteContainer: ContainerID?
        var generation: UInt64 = 0
        var xattrs = departure.xattrs
        var pinned = departure.pinned
        var batch = StoreBatch()
        var backup: Node?
        if let holderIno = state.byItemID[itemID], var holder = state.nodes[holderIno] {
            guard holder.kind == .file, holder.state.hasLocalContent, holderIno != ino else {
                // A placeholder cannot become a new item without its content: the rename and the create stay so.
                state.saves.keep(departure, at: location)
                return []
            }
            remoteVersion = holder.remoteVersion
            remoteContainer = holder.remoteContainer
            generation = holder.generation
            xattrs = holder.xattrs
            pinned = holder.pinned
            holder.itemID = .generate()
            // The backup is a new file: the document's tags stay with the document (DESIGN.md §2).
            holder.tags = []
            holder.remoteTags = nil
            holder.remoteVersion = nil
            holder.remoteContainer = nil
            holder.generation += 1
            try holder.apply(.committed(generation: holder.generation))
            holder.dirtySequence = state.allocateSequence()
            batch.upserts.append(holder)
            backup = holder
        } else if state.sync.deletesInFlight.contains(itemID) {
            state.saves.keep(departure, at: location)
            return []
        } else if let tombstone = state.tombstones[itemID] {
            remoteVersion = tombstone.remoteVersion
            remoteContainer = tombstone.container
            batch.tombstoneDeletes.append(itemID)
        }
        // The arriving file's own item, if the provider may have it (a file renamed here), is deleted there.
        var ownTombstone: Tombstone?
        if state.mayExistRemotely(arriving) {
            ownTombstone = Tombstone(
                itemID: arriving.itemID, container: arriving.remoteContainer ?? arriving.container,
                remoteVersion: arriving.remoteVersion, sequence: state.allocateSequence())
            batch.tombstoneUpserts.append(ownTombstone!)
        }
        let previousID = arriving.itemID
        arriving.itemID = itemID
        arriving.remoteVersion = remoteVersion
        arriving.remoteContainer = remoteContainer
        arriving.xattrs = xattrs.merging(arriving.xattrs) { _, new in new }
        arriving.pinned = pinned || arriving.pinned
        arriving.generation = max(arriving.generation, generation) + 1
        try arriving.apply(.committed(generation: arriving.generation))
        arriving.metadataDirty = remoteVersion != nil
        arriving.dirtySequence = state.allocateSequence()
        batch.upserts.append(arriving)
        // References that opened the document open it again (a removed document's were removed with it; a
        // document renamed over another file had its references follow that file's item).
        var restored: [ExternalReference] = []
        if backup == nil {
            for location in departure.references where state.child(location.parent, location.name) == nil
                && state.nodes[location.parent] != nil {
                restored.append(ExternalReference(parent: location.parent, name: location.name, target: itemID))
            }
            batch.referenceUpserts = restored
        }
        try stage(batch, state: &state)
        if let backup {
            state.nodes[backup.ino] = backup
            state.byItemID[backup.itemID] = backup.ino
            state.metadataEpochs[backup.ino, default: 0] += 1
            let deadline = state.saves.holdBackup(backup.itemID, now: now)
            scheduleSaveWindowEnd(deadline, state: &state)
        }
        state.tombstones[itemID] = nil
        if let ownTombstone { state.tombstones[ownTombstone.itemID] = ownTombstone }
        if state.byItemID[previousID] == ino { state.byItemID[previousID] = nil }
        state.nodes[ino] = arriving
        state.byItemID[itemID] = ino
        state.metadataEpochs[ino, default: 0] += 1
        for reference in restored {
            state.removeReference(at: reference.location)
            state.insertReference(reference)
        }
        state.saves.tookOver(itemID)
        logger.debug("\(arriving.name) takes over the document that left the name (\(itemID)): one save")
        return state.references(to: itemID)
    }

    /// Whether the upload of `node` waits for an editor's save that may still take its item over (or that
    /// moved a document away from its name moments ago, for a file another process put there).
    func isHeldForSave(_ node: Node, now: SaveTracker.Moment, state: borrowing State) -> Bool {
        if state.saves.isEmpty { return false }
        if state.saves.isHeld(node.itemID, now: now) { return true }
        return state.saves.isDeparted(.init(parent: node.parent, name: node.name), now: now)
    }

    /// Now, on the clock of the save window (``FileSystemConfiguration/saveClock``).
    var saveNow: SaveTracker.Moment { configuration.saveClock() }

    /// Now, on the system's monotonic clock (the default ``FileSystemConfiguration/saveClock``).
    static var monotonicNow: SaveTracker.Moment {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Wakes the uploader when a save's window ends (once for the earliest window still open).
    private func scheduleSaveWindowEnd(_ deadline: SaveTracker.Moment, state: inout State) {
        if let scheduled = state.saveWindowTimer, scheduled <= deadline { return }
        state.saveWindowTimer = deadline
        let now = saveNow
        let wait = deadline > now ? deadline - now : 0
        Task {
            try? await Task.sleep(nanoseconds: wait)
            self.saveWindowEnded()
        }
    }

    /// A save's window ended: what it held may go to the provider, and remote changes to it that an
    /// enumeration left for later are asked for again.
    func saveWindowEnded() {
        let refresh = state.withLock { state in
            state.saveWindowTimer = nil
            state.saves.expire(now: saveNow)
            if let next = state.saves.nextDeadline { scheduleSaveWindowEnd(next, state: &state) }
            return state.sync.takeRemoteChangesWaitingForSave()
        }
        notifyUploader()
        if refresh { refresher?.refreshSoon() }
    }
}
