import FolioCore
import SystemPackage

extension LocalProvider {
    /// Creates an item; a retry with the same id returns the existing item instead of creating another.
    public func createItem(_ template: RemoteItemTemplate, contents: FilePath?) async throws -> RemoteItem {
        let what = "create \(template.name)"
        return try recognizing(await create([ItemCreation(template, contents: contents)], what: what), what)[0].get()
    }

    /// Creates many items in one go: their contents are staged one after another and made durable by one shared
    /// flush, their names are added under one hold of the tree's lock and made durable by another. A thousand
    /// small uploads sent this way cost a few dozen flushes and lock holds, and a few calls through the network
    /// simulation (one each: a failure there fails the whole call, as a lost request would).
    public func createItems(_ creations: [ItemCreation]) async -> [Result<RemoteItem, FolioError>] {
        guard !creations.isEmpty else { return [] }
        let what = "create \(creations.count) items"
        return recognizing(await create(creations, what: what), what)
    }

    private func create(_ creations: [ItemCreation], what: String) async -> [Result<RemoteItem, FolioError>] {
        let simulation: NetworkSimulation
        do {
            simulation = try await admit(what, writes: true)
        } catch {
            return creations.map { _ in .failure(FolioError(error)) }
        }
        var batch = CreateBatch(creations)
        for index in batch.open {
            do {
                try ItemName.validate(creations[index].template.name)
            } catch {
                batch.fail(index, error)
            }
        }
        answerLandedCreatesWithoutContent(&batch)
        // Flushed with the other uploads in progress, unless every content is big (each gets its own `fsync`).
        let flushesTogether = batch.open.contains { Self.isSmall(creations[$0].contents) }
        if flushesTogether { diskFlush.uploadStarted() }
        defer { if flushesTogether { diskFlush.uploadEnded() } }
        await stageFiles(&batch, simulation: simulation)
        if batch.hasSmallStagedContent {
            do {
                try await diskFlush.flush()  // the contents are on disk before they get their names
            } catch {
                batch.failOpen(error)
            }
        }
        addToTree(&batch)
        // Creates of items another call is putting into place (the same item sent twice at once): once that
        // call has recorded it (a few ms), they are its retries. Bounded: after 10 s they fail, to be retried.
        var waits = 0
        while batch.hasOpenCreates, waits < 5_000 {
            waits += 1
            try? await Task.sleep(for: .milliseconds(2))
            addToTree(&batch)
        }
        batch.discardStaged()
        if batch.hasNamesToFlush {
            do {
                try await diskFlush.flush()  // the new names, before the answer
            } catch {
                batch.failAnswered(error)
            }
        }
        do {
            try gate.reply(what)
        } catch {
            return batch.results(lostWith: error)
        }
        return batch.results()
    }

    /// Answers the retried creates of folders, symlinks and empty files whose first attempt landed: nothing to
    /// stage, the item is returned as it is.
    private func answerLandedCreatesWithoutContent(_ batch: inout CreateBatch) {
        let creations = batch.creations
        let candidates = batch.open.filter { creations[$0].template.kind != .file || creations[$0].contents == nil }
        guard !candidates.isEmpty else { return }
        let found: [(Int, Result<RemoteItem, FolioError>)]
        do {
            found = try withTree("create") { tree in
                candidates.compactMap { index in
                    let template = creations[index].template
                    do {
                        guard let existing = try tree.existingItem(template) else {
                            return nil
                        }
                        return (index, .success(try tree.remoteItem(for: existing)))
                    } catch {
                        return (index, .failure(FolioError(error)))
                    }
                }
            }
        } catch {
            for index in candidates { batch.fail(index, error) }
            return
        }
        for (index, outcome) in found {
            switch outcome {
            case .success(let item): batch.answer(index, item, placed: false)
            case .failure(let error): batch.fail(index, error)
            }
        }
    }

    /// Copies each new file's content (none: an empty file) into the staging folder and gives it its mode, time
    /// and attributes there, where nobody sees it yet, before the tree's lock.
    private func stageFiles(_ batch: inout CreateBatch, simulation: NetworkSimulation) async {
        for index in batch.open where batch.creations[index].template.kind == .file {
            let template = batch.creations[index].template
            let prepare = { (staged: inout StagedUpload) throws in
                // In an adopted folder its attributes go into the id map instead (under the tree's lock).
                _ = try RemoteTree.prepareNewFile(&staged, template, onFile: !self.layout.isAdopted)
            }
            do {
                if let contents = batch.creations[index].contents {
                    batch.stage(
                        index,
                        try await stage(contents, simulation: simulation, what: "upload of \(template.name)",
                                        prepare: prepare))
                } else {
                    var empty = try stageEmptyFile()
                    do {
                        try prepare(&empty)
                    } catch {
                        empty.discard(placed: false)
                        throw error
                    }
                    batch.stage(index, empty)
                }
            } catch {
                batch.fail(index, error)
            }
        }
    }

    /// Adds every create still open to the tree; each fails or succeeds alone. Checked (and folders and symlinks
    /// made) under one hold of the tree's lock, new files linked into place outside it (on the calls' threads
    /// at once: that is most of a small upload's time), and recorded under one more hold.
    private func addToTree(_ batch: inout CreateBatch) {
        let open = batch.open
        guard !open.isEmpty else { return }
        let creations = batch.creations
        let staged = batch.staged
        var folders: [RemoteTree.FolderKey: RemoteTree.FoundFolder] = [:]
        defer { for folder in folders.values { folder.close() } }
        let plans: [Result<RemoteTree.CreatePlan, FolioError>]
        do {
            plans = try withTree("create") { tree in
                open.map { index in
                    Self.outcome {
                        try tree.planCreate(creations[index].template, staged: staged[index], folders: &folders)
                    }
                }
            }
        } catch {
            batch.failOpen(error)
            return
        }
        var placed: [PlacedFile] = []
        for (index, plan) in zip(open, plans) {
            switch plan {
            case .success(.done(let item, let wasPlaced)): batch.answer(index, item, placed: wasPlaced)
            case .success(.placeFile(let placement)):
                placed.append(PlacedFile(
                    index: index, placement: placement, outcome: Self.outcome { try RemoteTree.placeFile(placement) }))
            case .success(.busy): break  // left open: planned again soon
            case .failure(let error): batch.fail(index, error)
            }
        }
        record(placed, in: &batch)
        syncFoldersOfBigFiles(placed, in: &batch)
    }

    /// Big files were made durable on their own, not by the shared flushes: their new names are made durable by
    /// an `fsync` of each of their folders before the answer (failing it leaves their creates uncertain).
    private func syncFoldersOfBigFiles(_ placed: [PlacedFile], in batch: inout CreateBatch) {
        let big = placed.filter { file in
            !file.placement.staged.isSmall && (try? batch.outcomes[file.index]?.get()) != nil
        }
        var synced: Set<Int32> = []
        for file in big {
            guard let folder = file.placement.folder.descriptor, synced.insert(folder.rawValue).inserted else {
                continue
            }
            do {
                try SystemCalls.syncFolder(folder, path: file.placement.folder.path)
            } catch {
                for other in big where other.placement.folder.descriptor == folder { batch.fail(other.index, error) }
            }
        }
    }

    /// Records the files put into place, under one hold of the tree's lock. A name found taken may be the same
    /// item, put there by a concurrent create of it: then this create is its retry.
    private func record(_ placed: [PlacedFile], in batch: inout CreateBatch) {
        guard !placed.isEmpty else { return }
        let outcomes: [Result<(item: RemoteItem, renamed: Bool), FolioError>]
        do {
            outcomes = try withTree("create") { tree in
                placed.map { file in
                    Self.outcome {
                        defer { tree.finishPlacing(file.placement) }
                        switch file.outcome {
                        case .success(let made): return (try tree.recordPlacedFile(file.placement, made), true)
                        case .failure(.exists(let reason)):
                            guard let made = try tree.createPlacedConcurrently(file.placement) else {
                                throw FolioError.exists(reason)
                            }
                            return made
                        case .failure(let error): throw error
                        }
                    }
                }
            }
        } catch {
            for file in placed { batch.fail(file.index, error) }
            return
        }
        for (file, outcome) in zip(placed, outcomes) {
            switch outcome {
            case .success(let made): batch.answer(file.index, made.item, placed: made.renamed)
            case .failure(let error): batch.fail(file.index, error)
            }
        }
    }

    /// `body`'s value, or what it threw as a ``FolioError``.
    private static func outcome<Value>(_ body: () throws -> Value) -> Result<Value, FolioError> {
        do {
            return .success(try body())
        } catch {
            return .failure(FolioError(error))
        }
    }

    /// A new file that ``RemoteTree/placeFile(_:)`` put into place (or could not), to be recorded.
    private struct PlacedFile {
        /// Its create's index in the batch.
        var index: Int
        /// Where it was to go.
        var placement: RemoteTree.FilePlacement
        /// Its status and attributes once placed, or why it was not.
        var outcome: Result<(status: FileStatus, attributes: StoredAttributes), FolioError>
    }
}
