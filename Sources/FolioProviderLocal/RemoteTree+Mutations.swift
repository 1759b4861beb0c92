import FolioCore
import Foundation
import SystemPackage

extension RemoteTree {
    /// A validated move or rename, ready to run.
    struct MovePlan {
        /// Where the item goes.
        var container: ContainerID
        /// Its new parent (`nil` for the container's root).
        var parentID: ItemID?
        /// Its new name.
        var name: String
        /// Its new path.
        var path: FilePath
    }

    // MARK: Create

    /// A parent folder of creates: its container and id (`nil`: the container's root).
    struct FolderKey: Hashable {
        var container: ContainerID
        var id: ItemID?
    }

    /// A parent folder found on disk, with its id as it is recorded (`nil` for the container's root), and once
    /// files are to be put into it, open.
    struct FoundFolder {
        /// Its path when it was found.
        var path: FilePath
        /// Its id (`nil`: the container's root).
        var id: ItemID?
        /// The folder itself, after ``open()``.
        private(set) var descriptor: FileDescriptor?

        init(_ found: (path: FilePath, parentID: ItemID?)) {
            path = found.path
            id = found.parentID
        }

        /// Opens the folder (once): files are put into it through the descriptor, wherever it has moved.
        mutating func open() throws {
            guard descriptor == nil else { return }
            descriptor = try SystemCalls.openFolder(path)
        }

        /// Closes the descriptor, if it was opened.
        func close() {
            try? descriptor?.close()
        }
    }

    /// The item of `template` if it already exists (a create retried): where the index places it in the
    /// template's container, at the template's place, or where the index places it in another container (it
    /// was moved after it was created). Never a walk: a create costs the same in a remote of any size.
    mutating func existingItem(_ template: RemoteItemTemplate) throws -> LocatedItem? {
        let (id, container) = (template.id, template.container)
        let parentID = template.parentID == ItemID.root(of: container) ? nil : template.parentID
        let place = JournalRecord(id: id, parentID: parentID, name: template.name)
        // Indexed, or where the first attempt put it: never a search of the container (every new item would
        // cost a walk of everything; a first attempt that landed and was then moved by hand before the retry
        // is not recognized).
        if let found = try locateRecorded(place, in: container, searching: false) { return found }
        for other in indexes.keys where other != container {
            if let found = try? locateIndexed(id, in: other) { return found }
        }
        return nil
    }

    /// A create whose first attempt landed: the item as it is, or with the `staged` content if that differs
    /// from what the first attempt wrote and nobody changed the item since (then it is this writer's own
    /// content, superseded); changed by someone else, it is a `.conflict`.
    private mutating func retriedCreate(
        of existing: LocatedItem, _ template: RemoteItemTemplate, staged: StagedUpload?
    ) throws -> (item: RemoteItem, renamed: Bool) {
        let current = try remoteItem(for: existing)
        guard existing.kind == .file, let staged, !staged.hasSameContents(as: existing.path) else {
            return (current, false)
        }
        guard isUnchangedWrite(by: template.retryTag, at: existing, version: current.version) else {
            throw FolioError.conflict(
                "\(existing.name) (\(existing.id)) was created on the remote and changed there since")
        }
        let replaced = try replaceContents(
            of: existing, baseVersion: current.version, staged: staged, modificationTime: template.modificationTime,
            retryTag: template.retryTag)
        if replaced.renamed, !staged.isSmall {
            // A big file is not made durable by the shared flushes: its folder's entry now, before the answer (a
            // rare path: a retry that brings new content).
            try SystemCalls.syncFolder(at: replaced.item.path.removingLastComponent())
        }
        return (try remoteItem(for: replaced.item), replaced.renamed)
    }

    /// Records on `item` that the upload tagged `retryTag` made its `version` (after a metadata change gave it a
    /// new modification time).
    mutating func stampWrite(by retryTag: String?, version: String, on item: LocatedItem) throws {
        guard let retryTag else { return }
        let status = try SystemCalls.status(item.path)
        var attributes = try storedAttributes(at: item.path, status: status)
        attributes.stamp = StoredAttributes.stamp(version: version, retryTag: retryTag)
        attributes.id = attributes.id ?? item.id
        try store(attributes, at: item.path, status: status)
    }

    /// Whether `item`, now at `version`, is exactly what the upload tagged `retryTag` wrote.
    func isUnchangedWrite(by retryTag: String?, at item: LocatedItem, version: String) -> Bool {
        guard let attributes = try? item.attributes ?? storedAttributes(at: item.path, status: item.status) else {
            return false
        }
        return attributes.isWrite(by: retryTag, version: version)
    }

    /// The attributes of a file the upload tagged `retryTag` writes as `revision`, with status `status`.
    private static func written(
        _ id: ItemID, revision: UInt64, mode: UInt32?, retryTag: String?, status: FileStatus
    ) -> StoredAttributes {
        let version = ItemAttributes.version(kind: .file, revision: revision, status: status)
        return StoredAttributes(
            id: id, revision: revision, mode: mode,
            stamp: retryTag.map { StoredAttributes.stamp(version: version, retryTag: $0) })
    }

    /// What ``planCreate(_:staged:folders:)`` made of a create.
    enum CreatePlan {
        /// Done already: a folder or symlink was made, or a retry found its first attempt (`placed`: the staged
        /// file was put into place).
        case done(RemoteItem, placed: Bool)
        /// A new file, to be put into place outside the tree's lock (``placeFile(_:)``), then recorded under it
        /// (``recordPlacedFile(_:_:)``); its reservation ends with ``finishPlacing(_:)`` either way.
        case placeFile(FilePlacement)
        /// Another create of the same item is putting its file into place: plan again in a moment (it will have
        /// landed or failed by then).
        case busy
    }

    /// A new file's place, checked under the tree's lock: its folder, open, its template and its content.
    struct FilePlacement {
        /// The item to create.
        var template: RemoteItemTemplate
        /// Its folder (``FoundFolder/descriptor`` is open).
        var folder: FoundFolder
        /// Its staged content.
        var staged: StagedUpload
        /// Where it will be.
        var path: FilePath { folder.path.appending(template.name) }
    }

    /// Checks a create from a template and does all of it under the tree's lock except putting a new file's
    /// `staged` content (required for a file) into place: that is left to the caller, outside the lock, since
    /// linking a file into a big folder is most of a small upload's time and needs no check the lock makes
    /// atomic (the link fails by itself if the name is taken, and goes through the folder's descriptor, so the
    /// folder may even be renamed meanwhile). A retried create (same id) returns the existing item, with the
    /// staged content if that replaces this writer's own first attempt; a name taken by another item is
    /// `.exists`. Nothing is left half-created on failure.
    ///
    /// `folders` remembers the parent folders already found (by container and parent id), for the next creates
    /// of the same call: many files created into one folder look it up (and open it) once. The caller closes
    /// their descriptors (``FoundFolder/close()``).
    mutating func planCreate(
        _ template: RemoteItemTemplate, staged: StagedUpload?, folders: inout [FolderKey: FoundFolder]
    ) throws -> CreatePlan {
        try ItemName.validate(template.name)
        guard [.file, .directory, .symlink].contains(template.kind) else {
            throw FolioError.notSupported("a \(template.kind.rawValue) cannot be stored on a remote")
        }
        guard !template.id.isContainerRoot else {
            throw FolioError.invalidArgument("\(template.id) is reserved for container roots")
        }
        if template.kind == .symlink && (template.symlinkTarget ?? "").isEmpty {
            throw FolioError.invalidArgument("symlink \(template.name) without a target")
        }
        // Reserved while its file goes into place: two creates of one item never both place a file.
        if placing.contains(template.id) { return .busy }
        if let existing = try existingItem(template) {
            let retried = try retriedCreate(of: existing, template, staged: staged)
            noteChanged(retried.item)
            return .done(retried.item, placed: retried.renamed)
        }

        let key = FolderKey(container: template.container, id: template.parentID)
        var folder = try folders[key] ?? FoundFolder(directory(for: template.parentID, in: template.container))
        if layout.isBookkeeping(folder.path.appending(template.name)) {
            throw FolioError.invalidArgument("\(template.name) at the top of \(layout.root) is kept for Folio")
        }
        if template.kind == .file {
            guard var staged else { throw FolioError.invalidArgument("a file to create without its staged content") }
            try folder.open()
            folders[key] = folder
            if isAdopted {
                // Its attributes go into the map, keyed by the staged file's inode (which its link keeps),
                // before anyone can see it; ``finishPlacing(_:)`` forgets them if it never got there.
                let finished = try staged.finished ?? Self.prepareNewFile(&staged, template, onFile: false)
                itemIDs?.record(finished.attributes, for: finished.status)
            }
            placing.insert(template.id)
            return .placeFile(FilePlacement(template: template, folder: folder, staged: staged))
        }
        folders[key] = folder
        let (parentPath, parentID) = (folder.path, folder.id)
        let path = parentPath.appending(template.name)
        if try SystemCalls.statusIfPresent(path) != nil {
            throw FolioError.exists("\(template.name) in \(parentID.map(\.rawValue) ?? template.container.rawValue)")
        }
        let status: FileStatus
        switch template.kind {
        case .directory: status = try createDirectory(at: path, template: template)
        default: status = try createSymlink(at: path, template: template)
        }
        indexes[template.container, default: ContainerIndex()].places[template.id] =
            ContainerIndex.Place(parentID: parentID, name: template.name, isFile: false)
        if template.kind == .directory {
            // Made empty here: known whole at once (listed, with nothing in it) and watched, so what is put in
            // it by hand from now on is a change like any other (the client never lists a folder it made).
            // Anything put there before the watch is found through its parent's news of the new folder.
            watchBeforeListing(path)
            indexes[template.container]?.startListing(template.id)
            indexes[template.container]?.finishListing(template.id)
        }
        let item = try remoteItem(
            for: LocatedItem(
                id: template.id, container: template.container, parentID: parentID, name: template.name, path: path,
                status: status, symlinkTarget: template.kind == .symlink ? template.symlinkTarget : nil,
                attributes: nil
            )
        )
        noteChanged(item)
        return .done(item, placed: false)
    }

    /// Puts a new file's staged content into place (given its attributes first, unless that was done), without
    /// replacing anything (`.exists` if the name is taken meanwhile). Outside the tree's lock: it changes no
    /// state of the tree. Returns the file's status and attributes.
    static func placeFile(_ placement: FilePlacement) throws -> (status: FileStatus, attributes: StoredAttributes) {
        let template = placement.template
        do {
            var staged = placement.staged
            let finished = try staged.finished ?? Self.prepareNewFile(&staged, template)
            guard let folder = placement.folder.descriptor else {
                throw FolioError.io("the folder of \(template.name) is not open")
            }
            try staged.place(in: folder, as: template.name, path: placement.path)
            return finished
        } catch FolioError.exists {
            throw FolioError.exists("\(template.name) in \(placement.folder.path)")
        }
    }

    /// A create whose name was taken when ``placeFile(_:)`` came to it: if the file there carries the same
    /// id, a concurrent create of the same item put it there first (and may not have recorded it yet), and this
    /// one is its retry (``retriedCreate(of:_:staged:)``); otherwise the name belongs to someone else: `nil`.
    mutating func createPlacedConcurrently(_ placement: FilePlacement) throws -> (item: RemoteItem, renamed: Bool)? {
        let template = placement.template
        let path = placement.path
        guard let status = try SystemCalls.statusIfPresent(path), status.kind == .file else { return nil }
        let attributes = try storedAttributes(at: path, status: status)
        guard attributes.id == template.id else { return nil }
        let existing = LocatedItem(
            id: template.id, container: template.container, parentID: placement.folder.id, name: template.name,
            path: path, status: status, symlinkTarget: nil, attributes: attributes)
        let retried = try retriedCreate(of: existing, template, staged: placement.staged)
        noteChanged(retried.item)
        return retried
    }

    /// Ends the reservation of a planned file's item, whether or not ``placeFile(_:)`` placed it.
    mutating func finishPlacing(_ placement: FilePlacement) {
        placing.remove(placement.template.id)
        if isAdopted, let staged = placement.staged.finished?.status,
            (try? SystemCalls.statusIfPresent(placement.path))??.inode != staged.inode {
            forgetAttributes(of: staged)  // not placed: its inode goes back to the file system
        }
    }

    /// Records a file that ``placeFile(_:)`` put into place, under the tree's lock; returns it.
    mutating func recordPlacedFile(
        _ placement: FilePlacement, _ placed: (status: FileStatus, attributes: StoredAttributes)
    ) throws -> RemoteItem {
        let template = placement.template
        indexes[template.container, default: ContainerIndex()].places[template.id] =
            ContainerIndex.Place(parentID: placement.folder.id, name: template.name, isFile: true)
        let item = try remoteItem(
            for: LocatedItem(
                id: template.id, container: template.container, parentID: placement.folder.id, name: template.name,
                path: placement.path, status: placed.status, symlinkTarget: nil, attributes: placed.attributes
            )
        )
        noteChanged(item)
        return item
    }

    /// Gives the staged content of a new file its mode, time and attributes (the first revision of
    /// `template`'s item). `onFile: false` (an adopted folder) leaves them off the file:
    /// ``planCreate(_:staged:folders:)`` records them in the id map.
    @discardableResult
    static func prepareNewFile(
        _ staged: inout StagedUpload, _ template: RemoteItemTemplate, onFile: Bool = true
    ) throws -> (status: FileStatus, attributes: StoredAttributes) {
        let (onDisk, storedMode) = diskMode(template.mode, kind: .file)
        return try staged.finish(onDisk: onDisk, modificationTime: template.modificationTime, onFile: onFile) {
            written(template.id, revision: 1, mode: storedMode, retryTag: template.retryTag, status: $0)
        }
    }

    /// Makes a folder and gives it its attributes; removes it again if that fails. Returns its status.
    private mutating func createDirectory(at path: FilePath, template: RemoteItemTemplate) throws -> FileStatus {
        try SystemCalls.makeDirectory(path, permissions: 0o700)
        do {
            let (onDisk, storedMode) = Self.diskMode(template.mode, kind: .directory)
            try store(StoredAttributes(id: template.id, mode: storedMode), at: path, status: SystemCalls.status(path))
            try SystemCalls.setPermissions(path, onDisk)
            try SystemCalls.setModificationTime(path, template.modificationTime)
            return try SystemCalls.status(path)
        } catch {
            try? SystemCalls.removeDirectory(path)
            throw error
        }
    }

    /// Makes a symlink and records its id; removes it again if that fails. Returns its status.
    private mutating func createSymlink(at path: FilePath, template: RemoteItemTemplate) throws -> FileStatus {
        let target = template.symlinkTarget ?? ""
        try SystemCalls.makeSymlink(at: path, target: target)
        do {
            try SystemCalls.setModificationTime(path, template.modificationTime)
            let status = try SystemCalls.status(path)
            symlinkIDs.record(template.id, status: status, target: target)
            try symlinkIDs.save()
            return status
        } catch {
            if let status = try? SystemCalls.status(path) { symlinkIDs.forget(status) }
            SystemCalls.removeFileQuietly(path)
            throw error
        }
    }

    // MARK: Modify

    /// Replaces a file's content with the `staged` file, atomically, if the file is still at `baseVersion`
    /// (otherwise `.conflict`: a remote change is never overwritten). The id stays; the revision goes up by one.
    mutating func replaceContents(
        of item: LocatedItem, baseVersion: String, staged: StagedUpload, modificationTime: Timestamp?,
        retryTag: String?
    ) throws -> (item: LocatedItem, renamed: Bool) {
        switch item.kind {
        case .directory: throw FolioError.isDirectory("\(item.name) (\(item.id)) has no content")
        case .symlink: throw FolioError.invalidArgument("\(item.name) (\(item.id)) is a symlink: it has no content")
        default: break
        }
        let attributes = try item.attributes ?? storedAttributes(at: item.path, status: item.status)
        var current = item
        current.attributes = attributes
        let currentVersion = try remoteItem(for: current).version
        if currentVersion != baseVersion {
            // A retry of an upload that landed although its reply was lost: the remote already has exactly
            // this content, so there is nothing to do and no conflict.
            if staged.hasSameContents(as: item.path) { return (current, false) }
            // Moved on from `baseVersion` only by this writer's own earlier attempt: not a conflict either.
            guard attributes.isWrite(by: retryTag, version: currentVersion) else {
                throw FolioError.conflict(
                    "\(item.name) (\(item.id)) is at version \(currentVersion) on the remote, not \(baseVersion)")
            }
        }
        let mode = Self.reportedMode(attributes.mode, status: item.status)
        let (onDisk, storedMode) = Self.diskMode(mode, kind: .file)
        let revision = attributes.revision + 1
        var staged = staged
        let (status, written) = try staged.finish(
            onDisk: onDisk, modificationTime: modificationTime, onFile: !isAdopted
        ) {
            Self.written(item.id, revision: revision, mode: storedMode, retryTag: retryTag, status: $0)
        }
        if isAdopted {
            // The new inode keeps the item's id (saved with the map before the lock is let go).
            itemIDs?.record(written, for: status)
        }
        try staged.replace(item.path)
        if isAdopted { forgetAttributes(of: item.status) }
        var replaced = item
        replaced.status = status
        replaced.attributes = written
        return (replaced, true)
    }

    /// Checks a move or rename before anything changes: the name, the destination folder, that the destination
    /// name is free. `nil` when the item stays where it is.
    mutating func planMove(of item: LocatedItem, _ changes: RemoteItemChanges) throws -> MovePlan? {
        let container = changes.container ?? item.container
        var parentID: ItemID?
        if let requested = changes.parentID {
            parentID = requested
        } else {
            parentID = container == item.container ? item.parentID : nil
        }
        if parentID == ItemID.root(of: container) { parentID = nil }
        let name = changes.name ?? item.name
        guard container != item.container || parentID != item.parentID || name != item.name else { return nil }
        try ItemName.validate(name)
        if parentID == item.id {
            throw FolioError.invalidArgument("cannot move \(item.name) (\(item.id)) into itself")
        }
        let destination = try directory(for: parentID, in: container)
        let path = destination.path.appending(name)
        if layout.isBookkeeping(path) {
            throw FolioError.invalidArgument("\(name) at the top of \(layout.root) is kept for Folio")
        }
        if try SystemCalls.statusIfPresent(path) != nil {
            throw FolioError.exists("\(name) in \(destination.parentID.map(\.rawValue) ?? container.rawValue)")
        }
        return MovePlan(container: container, parentID: destination.parentID, name: name, path: path)
    }

    /// Moves or renames an item as planned (never replacing what is at the destination) and updates the
    /// indexes; a folder brings everything below it along.
    mutating func move(_ item: LocatedItem, as plan: MovePlan) throws -> LocatedItem {
        try SystemCalls.renameWithoutReplacing(item.path, to: plan.path)
        let place = ContainerIndex.Place(parentID: plan.parentID, name: plan.name, isFile: item.kind == .file)
        if plan.container == item.container {
            indexes[item.container]?.places[item.id] = place
        } else {
            // Everything below the item leaves its container (one departure: a folder's descendants go with it)
            // and arrives in the other (each journaled there; the caller journals the item itself).
            let moved = indexes[item.container]?.removeSubtree(item.id) ?? [:]
            noteDeparted(item.id, from: item.container)
            if indexes[plan.container] != nil {
                for (id, movedPlace) in moved { indexes[plan.container]?.places[id] = movedPlace }
                indexes[plan.container]?.places[item.id] = place
            }
            for (id, movedPlace) in moved where id != item.id {
                pendingRecords[plan.container, default: []].append(
                    JournalRecord(id: id, parentID: movedPlace.parentID, name: movedPlace.name))
            }
        }
        var result = item
        result.container = plan.container
        result.parentID = plan.parentID
        result.name = plan.name
        result.path = plan.path
        result.status = try SystemCalls.status(plan.path)
        return result
    }

    /// Applies permission and modification time changes (a symlink has no permissions of its own).
    mutating func applyAttributes(_ changes: RemoteItemChanges, to item: LocatedItem) throws -> LocatedItem {
        if let mode = changes.mode, item.kind != .symlink {
            try applyMode(mode, kind: item.kind, to: item.path, id: item.id)
        }
        if let modificationTime = changes.modificationTime {
            try SystemCalls.setModificationTime(item.path, modificationTime)
        }
        var result = item
        result.status = try SystemCalls.status(item.path)
        if changes.mode != nil { result.attributes = nil }  // read again when needed
        return result
    }

    // MARK: Delete

    /// Deletes an item (a folder must be empty). An item already gone is fine; an item whose version is no
    /// longer `baseVersion` is a `.conflict` (a remote change is never deleted unseen), unless it is a file
    /// whose current version `retryTag` wrote. Without a base, a file is deleted only if `retryTag` (when
    /// given) wrote its current version: it was created by a create whose answer never came.
    mutating func delete(_ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?) throws {
        do {
            _ = try containerDirectory(container)
        } catch FolioError.notFound {
            return
        }
        // Without a base version the item was never known to exist (a create whose answer never came): the
        // index, which has every item this provider created or scanned, is asked without a walk on a miss,
        // so deleting many never-uploaded files does not walk the remote once each.
        guard let item = try locate(id, in: container, rescanOnMiss: baseVersion != nil) else { return }
        let current = try remoteItem(for: item).version
        if let baseVersion, current != baseVersion,
            !(item.kind == .file && isUnchangedWrite(by: retryTag, at: item, version: current)) {
            throw FolioError.conflict(
                "\(item.name) (\(id)) changed on the remote: version \(current), not \(baseVersion)")
        }
        if baseVersion == nil, retryTag != nil, item.kind == .file,
            !isUnchangedWrite(by: retryTag, at: item, version: current) {
            // Created by a create whose answer never came, and changed since by someone else.
            throw FolioError.conflict("\(item.name) (\(id)) was created on the remote and changed there since")
        }
        switch item.kind {
        case .directory:
            try SystemCalls.removeDirectory(item.path)
        case .symlink:
            try SystemCalls.removeFile(item.path)
            symlinkIDs.forget(item.status)
            try symlinkIDs.save()
        default:
            try SystemCalls.removeFile(item.path)
        }
        forgetAttributes(of: item.status)
        noteDeparted(id, from: container)
    }
}
