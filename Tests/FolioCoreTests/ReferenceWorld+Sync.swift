import FolioCore
import FolioTesting

/// The sync engine's work, by hand (as `Uploader`, `RemotePoller`, `FolderLister` and `ContentKeeper` do it), and
/// the daemon's life: each step is one piece of it, so the sequence decides how uploads, merges, listings,
/// restarts and crashes interleave.
extension ReferenceWorld {
    // MARK: Uploads

    /// Takes up to `count` pieces of upload work from the core; they are in flight until finished.
    func takeUploads(count: Int) {
        let works = fileSystem.nextUploadWork(limit: count)
        for work in works {
            note("take upload: \(work.summary)")
            inFlight.append((work, nil))
        }
    }

    /// Sends one piece of work in flight to the provider (perhaps failing before, or losing the answer).
    func sendUpload(pick: UInt32, fault: ReferenceOperation.UploadFault) async {
        let waiting = inFlight.indices.filter { inFlight[$0].result == nil }
        guard let index = ReferenceOperation.choose(waiting, pick) else { return }
        let work = inFlight[index].work
        let operation: InMemoryProvider.Operation = switch work {
        case .create: .createItem
        case .modify: .modifyItem
        case .delete: .deleteItem
        }
        switch provider.isOffline ? .none : fault {
        case .none: break
        case .failsBefore: provider.inject(.before(.offline("injected: the remote cannot be reached")), on: operation)
        case .answerLost: provider.inject(.afterApplying(.interrupted("injected: the answer was lost")), on: operation)
        }
        let result = await send(work)
        inFlight[index].result = result
        note("send \(work.summary)\(fault == .none ? "" : " (\(fault))"): \(Self.describe(result))")
    }

    /// Tells the core how one piece of work that was sent ended.
    func finishUpload(pick: UInt32) throws {
        let sent = inFlight.indices.filter { inFlight[$0].result != nil }
        guard let index = ReferenceOperation.choose(sent, pick), let result = inFlight[index].result else { return }
        let work = inFlight.remove(at: index).work
        note("finish \(work.summary): \(Self.describe(result))")
        fileSystem.finishUpload(work, result: result)
    }

    /// Makes a piece of work's provider call, as `Uploader` does, and closes its content.
    func send(_ work: UploadWork) async -> Result<RemoteItem?, FolioError> {
        defer { work.closeContents() }
        do {
            switch work {
            case .create(_, let template, let contents, _, _):
                return .success(try await provider.createItem(template, contents: contents))
            case .modify(_, let itemID, let container, let baseVersion, let changes, let contents, _, _):
                return .success(try await provider.modifyItem(
                    itemID, in: container, baseVersion: baseVersion, changes: changes, contents: contents))
            case .delete(let tombstone, let retryTag):
                try await provider.deleteItem(
                    tombstone.itemID, in: tombstone.container, baseVersion: tombstone.remoteVersion,
                    retryTag: retryTag)
                return .success(nil)
            }
        } catch {
            return .failure(FolioError(error))
        }
    }

    /// A provider call's outcome, for the log.
    static func describe(_ result: Result<RemoteItem?, FolioError>) -> String {
        switch result {
        case .success(let item?): "done (\(item.name) at \(item.version))"
        case .success(nil): "done"
        case .failure(let error): "\(error)"
        }
    }

    /// Forgets the uploads in flight and the change sets fetched (the daemon that had them is gone); what was
    /// sent stays sent.
    private func dropWorkInFlight() {
        for (work, result) in inFlight where result == nil { work.closeContents() }
        inFlight.removeAll()
        fetched.removeAll()
    }

    // MARK: Remote changes

    /// Asks for the changes since the core's anchor and keeps them to apply later; an expired anchor makes a
    /// resync at once.
    func fetchChanges() async throws {
        guard let anchor = fileSystem.anchor(of: .drive) else { return }
        let epoch = fileSystem.remoteEpoch()
        do {
            let changes = try await provider.changes(in: .drive, since: anchor)
            fetched.append((changes, epoch))
            note("fetch changes: \(Self.summary(changes))")
        } catch FolioError.anchorExpired {
            if try avoidsResync() { return note("the anchor expired: resync later (uploads are on their way)") }
            note("the anchor expired: resync")
            try await merging("a resync") { try await resync() }
        }
    }

    /// Whether a resync now would show ``ReferenceDefect/resyncWhileUploadsInFlight`` (something waits for upload, or
    /// an upload's answer is not in) while that defect is avoided.
    func avoidsResync() throws -> Bool {
        guard avoiding.contains(.resyncWhileUploadsInFlight) else { return false }
        return !inFlight.isEmpty || fileSystem.pendingUploadCount > 0
    }

    /// Applies the oldest change set fetched.
    func applyChanges() throws {
        guard !fetched.isEmpty else { return }
        let (changes, epoch) = fetched.removeFirst()
        try applyMerge("the changes \(Self.summary(changes))") {
            try fileSystem.applyChanges(changes, in: .drive, epoch: epoch)
        }
    }

    /// A change set, for the log.
    static func summary(_ changes: RemoteChanges) -> String {
        let updated = changes.updated.map { "\($0.name)@\($0.version)" }.joined(separator: " ")
        return "[\(updated)] deleted \(changes.deleted.count)\(changes.moreComing ? ", more coming" : "")"
    }

    /// Runs a synchronous merge (`body`, returning whether it was applied), notes it, and checks it as
    /// ``merging(_:_:)`` does.
    private func applyMerge(_ what: String, _ body: () throws -> Bool) throws {
        let before = try observe()
        let applied = try body()
        note("merge \(what): \(applied ? "applied" : "set aside (raced with an upload)")")
        if Self.traces { try trace() }
        try checkMerge(what, before: before)
        if applied { stepWasDurable = true }
    }

    /// Lists one folder that needs listing, as `FolderLister` does.
    func listFolder(pick: UInt32) async throws {
        let observed = try observe()
        let folders = observed.paths.filter { fileSystem.listingTarget($0.key) != nil }.sorted { $0.value < $1.value }
        guard let (ino, path) = ReferenceOperation.choose(folders, pick) else { return }
        try await list(ino, path)
    }

    /// Lists the folder `ino` at `path` and merges the listing.
    func list(_ ino: UInt64, _ path: String) async throws {
        guard let target = fileSystem.listingTarget(ino) else { return }
        let epoch = fileSystem.remoteEpoch()
        let items: [RemoteItem]
        do {
            items = try await provider.enumerateWholeFolder(target.folder, in: target.container)
        } catch FolioError.notFound {
            return note("list /\(path): gone from the remote")
        } catch FolioError.notDirectory {
            return note("list /\(path): not a folder on the remote")
        }
        try applyMerge("the listing of /\(path) (\(items.map(\.name).sorted().joined(separator: " ")))") {
            try fileSystem.applyFolderListing(ino, items: items, epoch: epoch)
        }
    }

    /// Takes again the items the core asks for (a delete of ours the remote refused), as `RemotePoller` does.
    func takeAgain() async throws {
        for (id, container) in fileSystem.itemsToTakeAgain().sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
            let epoch = fileSystem.remoteEpoch()
            let item: RemoteItem?
            do {
                item = try await provider.item(id, in: container)
            } catch FolioError.notFound {
                item = nil
            }
            try applyMerge("\(id) taken again (\(item.map { "\($0.name)@\($0.version)" } ?? "gone"))") {
                try fileSystem.applyItemTakenAgain(item, id: id, in: container, epoch: epoch)
            }
        }
    }

    /// Lists again every folder the core lists, then takes a new anchor (an expired anchor), as `RemotePoller`
    /// does. Returns false if a listing raced with an upload (the anchor stays expired: done again next time).
    func resync() async throws -> Bool {
        let anchor = try await provider.currentAnchor(in: .drive)
        for ino in fileSystem.listedFolders(in: .drive) {
            guard let node = fileSystem.node(ino) else { continue }
            let epoch = fileSystem.remoteEpoch()
            let items: [RemoteItem]
            do {
                items = try await provider.enumerateWholeFolder(
                    node.itemID.isContainerRoot ? nil : node.itemID, in: .drive)
            } catch FolioError.notFound {
                continue
            } catch FolioError.notDirectory {
                continue
            }
            guard try fileSystem.applyFolderListing(ino, items: items, epoch: epoch) else { return false }
        }
        try fileSystem.recordAnchor(anchor, for: .drive)
        return true
    }

    /// Keeps the remote side of every conflict as a conflict version (an item the remote deleted is created
    /// again), as `ContentKeeper` does. Returns whether there was any.
    @discardableResult
    func keepConflicts() async throws -> Bool {
        let conflicted = fileSystem.conflictedItems().sorted { $0.itemID.rawValue < $1.itemID.rawValue }
        for item in conflicted {
            let path = fileSystem.path(of: item.ino) ?? "inode \(item.ino)"
            let remote: RemoteItem
            do {
                remote = try await provider.item(item.itemID, in: item.container)
            } catch FolioError.notFound {
                note("conflicted /\(path) is gone from the remote: created again")
                try fileSystem.recreateDeletedItem(item.ino)
                continue
            }
            if remote.version == item.remoteVersion {
                fileSystem.settleConflictFetch(item.itemID)
                continue
            }
            let file = try fileSystem.newContentFile()
            do {
                let fetched = try await provider.fetchContents(
                    of: remote.id, in: item.container, version: remote.version, to: file.path) { _ in }
                try fileSystem.addConflictVersion(item.ino, remote: fetched, fileName: file.name)
                note("conflicted /\(path): the remote's \(remote.version) kept as a conflict version")
            } catch {
                fileSystem.discardContentFile(file.name)
                note("conflicted /\(path): cannot keep the remote's \(remote.version): \(error)")
            }
        }
        return !conflicted.isEmpty
    }

    // MARK: The daemon's life

    /// Unmounts and mounts again: everything is written first, so the tree is the model's.
    func remount() async throws {
        dropWorkInFlight()
        note("remount")
        try core.remount()
        try await connect()
        stepWasDurable = true
    }

    /// `kill -9` and a start: what was not written is lost, but the tree is one the store could hold (never one
    /// older than the last commit).
    func crash() async throws {
        dropWorkInFlight()
        note("kill -9, start again")
        try core.crashAndRestart()
        try await connect()
        let observed = try observe()
        guard crashCandidates.contains(observed.entries) else {
            throw failure("crash", "after a crash the tree is none of the \(crashCandidates.count) the store "
                + "could hold; against the last: " + Self.difference(model, observed.entries))
        }
        stepTookTree = true
        stepWasDurable = true
    }

    // MARK: Settling

    /// Uploads and merges until nothing is left to do (conflicts resolved keeping both versions), then checks
    /// that this device and the remote agree.
    func settle() async throws {
        note("settle")
        clock.advance(by: .seconds(10))  // (every save window over)
        provider.isOffline = false
        for _ in 0..<Self.settleRounds {
            var busy = !inFlight.isEmpty
            for index in inFlight.indices where inFlight[index].result == nil {
                inFlight[index].result = await send(inFlight[index].work)
            }
            for case (let work, let result?) in inFlight {
                note("finish \(work.summary): \(Self.describe(result))")
                fileSystem.finishUpload(work, result: result)
            }
            inFlight.removeAll()
            fetched.removeAll()
            for _ in 0..<100 {
                let works = fileSystem.nextUploadWork(limit: 8)
                if works.isEmpty { break }
                busy = true
                for work in works {
                    let result = await send(work)
                    note("upload \(work.summary): \(Self.describe(result))")
                    fileSystem.finishUpload(work, result: result)
                }
            }
            if try followStatus() { busy = true }
            if try await keepConflicts() { busy = true }
            for (path, node) in try observe().nodes.sorted(by: { $0.key < $1.key }) where node.kind == .file {
                guard try fileSystem.versions(of: node.ino).count > 1 else { continue }
                note("resolve /\(path) keeping both")
                try fileSystem.resolveConflict(node.ino, keep: .both)
                busy = true
            }
            model = try observe().entries
            if !fileSystem.itemsToTakeAgain().isEmpty {
                busy = true
                try await takeAgain()
            }
            if try await pullEveryChange() { busy = true }
            let observed = try observe()
            for (ino, path) in observed.paths.sorted(by: { $0.value < $1.value })
            where fileSystem.listingTarget(ino) != nil {
                busy = true
                try await list(ino, path)
            }
            model = try observe().entries
            if !busy && fileSystem.pendingUploadCount == 0 && fileSystem.conflictedItems().isEmpty {
                try await checkAgreement()
                stepTookTree = true
                return
            }
        }
        throw failure("settle", "nothing converges after \(Self.settleRounds) rounds of uploads and merges: "
            + "\(fileSystem.pendingUploadCount) changes pending, status \(fileSystem.status())")
    }

    /// Does what `folio status` asks of the user for each upload that needs them. Two such failures happen here: a
    /// name the remote has for another item (two devices made one name): the item here is renamed to a free name;
    /// and a move the remote refuses because the other device moved the destination into the item (two moves
    /// make a cycle): the item here is moved to the root. Then it is retried (`folio retry PATH`). Returns whether
    /// there was any.
    private func followStatus() throws -> Bool {
        let failures = fileSystem.status().failures
        for failure in failures {
            guard let colon = failure.range(of: ": ") else { continue }
            let path = String(failure[..<colon.lowerBound])
            guard let ino = try? core.ino(path) else { continue }
            let cycle = failure.contains("into itself")
            guard failure.contains("already exists") || cycle else {
                throw self.failure("settle", "an upload needs the user for another reason than a taken name or a "
                    + "move cycle: " + failure)
            }
            let folder = cycle ? "" : Self.parent(path)
            var name = Self.name(path) + " (here)"
            var counter = 1
            while (try? core.ino(Self.join(folder, name))) != nil {
                counter += 1
                name = Self.name(path) + " (here \(counter))"
            }
            note("user: /\(path) is refused (\(cycle ? "a move cycle" : "a name taken on the remote")); moved to /"
                + Self.join(folder, name) + ", retried")
            try fileSystem.rename(
                parent: core.ino(Self.parent(path)), name: Self.name(path), newParent: core.ino(folder),
                newName: name, flags: [])
            fileSystem.retryFailedUploads(under: ino)
        }
        return !failures.isEmpty
    }

    /// How many rounds of uploads and merges settling takes at most (it takes a few).
    static let settleRounds = 12

    /// Fetches and applies changes until there are none; returns whether any came (or one was set aside).
    private func pullEveryChange() async throws -> Bool {
        var any = false
        while let anchor = fileSystem.anchor(of: .drive) {
            let epoch = fileSystem.remoteEpoch()
            let changes: RemoteChanges
            do {
                changes = try await provider.changes(in: .drive, since: anchor)
            } catch FolioError.anchorExpired {
                if try avoidsResync() {
                    note("the anchor expired: resync later (uploads are on their way)")
                    return true
                }
                note("the anchor expired: resync")
                try await merging("a resync") { try await resync() }
                return true
            }
            if !changes.updated.isEmpty || !changes.deleted.isEmpty { any = true }
            var applied = false
            try applyMerge("the changes \(Self.summary(changes))") {
                applied = try fileSystem.applyChanges(changes, in: .drive, epoch: epoch)
                return applied
            }
            if !applied { return true }
            if !changes.moreComing { return any }
        }
        return any
    }

    /// Once settled: this device and the remote hold the same tree (paths, kinds, contents, item ids, versions),
    /// nothing here waits for upload, reading a placeholder gives its version's content, and every content that
    /// must not be lost is there.
    private func checkAgreement() async throws {
        var observed = try observe()
        for (path, node) in observed.nodes.sorted(by: { $0.key < $1.key })
        where node.kind == .file && !node.state.hasLocalContent {
            let read = try await readThroughCore(path)
            guard observed.entries[path] == .file(read) else {
                throw failure("agreement", "/\(path) reads \(Self.tag(read)) once downloaded, but its version "
                    + "\(node.remoteVersion ?? "nil") is \(observed.entries[path]?.description ?? "nothing")")
            }
        }
        observed = try observe()
        let remote = remoteTree()
        var remoteEntries: [String: ReferenceEntry] = ["": .directory]
        for (path, item) in remote {
            remoteEntries[path] = switch item.kind {
            case .directory: .directory
            case .file: .file(String(decoding: provider.content(of: item.id) ?? [], as: UTF8.self))
            default: .other(item.kind.rawValue)
            }
        }
        guard observed.entries == remoteEntries else {
            throw failure("agreement", "settled, this device and the remote differ (expected: the remote's): "
                + Self.difference(remoteEntries, observed.entries))
        }
        for (path, node) in observed.nodes.sorted(by: { $0.key < $1.key }) {
            guard let item = remote[path], item.id == node.itemID else {
                throw failure("agreement", "/\(path) is item \(node.itemID) here, "
                    + "\(remote[path]?.id.rawValue ?? "none") on the remote")
            }
            guard node.kind != .file || node.remoteVersion == item.version else {
                throw failure("agreement", "/\(path) is based on version \(node.remoteVersion ?? "nil") here, the "
                    + "remote has \(item.version)")
            }
            guard node.state == .materialized || node.state == .placeholder, !node.metadataDirty else {
                throw failure("agreement", "/\(path) is \(node.state.name)\(node.metadataDirty ? ", renamed" : "") "
                    + "although nothing is pending")
            }
        }
        model = observed.entries
        try checkNothingLost(observed)
    }
}
