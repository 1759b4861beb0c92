import FolioCore
import FolioTesting
import Foundation
import XCTest

/// The world one sequence runs in: this device's core (a real store and content cache, `CoreHarness`), the
/// remote it syncs with (an ``InMemoryProvider`` that another device changes too), and the model of what
/// DESIGN.md §2 promises (DESIGN.md §4 example 8, mountpoint-s3's reftests):
///
/// - Local operations behave as POSIX says on a tree the model predicts exactly; the tree is compared with the
///   model after every step.
/// - A merge of remote changes never changes nor removes a file with a local version waiting for upload, nor
///   undoes a local name change not uploaded yet; after a merge the model takes the tree as it is.
/// - A commit survives a crash: after `kill -9` the tree is one the model had since the last point known
///   written (a commit, a group write, a merge), never older.
/// - Nothing is silently lost: every content written on either side is, at every step, current here, current
///   on the remote, or a conflict version, unless a user who saw it replaced or removed it.
/// - Once everything is uploaded and merged (``settle()``), this device and the remote agree: the same paths,
///   kinds, contents, item ids and versions, nothing pending.
///
/// Uploads, merges and listings run by hand at the steps' own points (taken, sent and finished separately, a
/// change set fetched now and applied later), so the sequence decides the interleavings.
final class ReferenceWorld {
    /// The clock of the save window.
    let clock = ManualClock()
    /// The remote, shared with another device.
    let provider = InMemoryProvider(changesPerAnswer: 4)
    /// This device's core.
    let core: CoreHarness
    /// The tree the model expects here, by path ("" is the root).
    var model: [String: ReferenceEntry] = ["": .directory]
    /// Contents that must not be lost (written by someone, not replaced or removed by a user who saw them).
    var alive: Set<String> = []
    /// The trees the store may hold after a crash: those since the last point known written.
    var crashCandidates: [[String: ReferenceEntry]] = []
    /// Upload work taken from the core, and how its provider call ended once sent.
    var inFlight: [(work: UploadWork, result: Result<RemoteItem?, FolioError>?)] = []
    /// Change sets fetched and not applied yet, with the upload epoch taken before each.
    var fetched: [(changes: RemoteChanges, epoch: UInt64)] = []
    /// What the steps did, as they resolved.
    var log: [String] = []
    /// The step running.
    var step = 0
    /// Whether the step running left the store written for sure.
    var stepWasDurable = false
    /// Whether the step running took the tree from the core (a merge) instead of predicting it.
    var stepTookTree = false
    /// The known defects whose steps this world does not take.
    let avoiding: Set<ReferenceDefect>
    /// The folders this device removed (or replaced by a rename), by item id.
    var removedFolders: Set<ItemID> = []

    var fileSystem: FolioFileSystem { core.fileSystem }

    /// A world with an empty remote and a fresh core that has registered the Drive and listed its root; it does not
    /// take the steps that show the defects `avoiding`.
    init(avoiding: Set<ReferenceDefect>) async throws {
        self.avoiding = avoiding
        core = try CoreHarness(groupWriteDelay: .seconds(3600), saveWindow: .seconds(3), clock: clock)
        try await connect()
        if let target = fileSystem.listingTarget(FolioFileSystem.rootIno) {
            let epoch = fileSystem.remoteEpoch()
            let items = try await provider.enumerateWholeFolder(target.folder, in: target.container)
            try fileSystem.applyFolderListing(FolioFileSystem.rootIno, items: items, epoch: epoch)
        }
        crashCandidates = [model]
    }

    /// Connects the core to the remote as the daemon does when it starts: a materializer, the Drive registered
    /// (with an anchor the first time), uploads that failed before retried.
    func connect() async throws {
        fileSystem.connect(
            materializer: ReferenceMaterializer(fileSystem: fileSystem, provider: provider), uploader: nil,
            invalidator: nil)
        let anchor = fileSystem.anchor(of: .drive) == nil ? try await provider.currentAnchor(in: .drive) : nil
        let resync = try fileSystem.registerContainers([(Container.drive, anchor)])
        if !resync.isEmpty { _ = try await self.resync() }
        _ = fileSystem.retryFailedUploads()
    }

    // MARK: Running

    /// Runs `operations`, checking the model after each, then settles and checks that both sides agree.
    func run(_ operations: [ReferenceOperation]) async throws(ReferenceFailure) {
        for (index, operation) in operations.enumerated() {
            step = index
            try await run(operation)
        }
        step = operations.count
        try await run(.settle)
    }

    /// Runs one step and checks what it left.
    private func run(_ operation: ReferenceOperation) async throws(ReferenceFailure) {
        stepWasDurable = false
        stepTookTree = false
        do {
            do {
                try await perform(operation)
            } catch let error as FolioError {
                guard provider.isOffline, case .offline = error else { throw error }
                note("\(operation) stopped: \(error)")
            }
            if Self.traces { try trace() }
            try checkAfterStep()
        } catch let failure as ReferenceFailure {
            throw failure
        } catch {
            throw failure("error", "\(operation) threw \(error)")
        }
        if stepWasDurable {
            crashCandidates = [model]
        } else if crashCandidates.last != model {
            crashCandidates.append(model)
        }
    }

    /// Performs one step.
    private func perform(_ operation: ReferenceOperation) async throws {
        switch operation {
        case .write(let folder, let name, let length): try await write(folder: folder, name: name, length: length)
        case .append(let file): try await append(file: file)
        case .makeFolder(let folder, let name): try makeFolder(folder: folder, name: name)
        case .rename(let item, let folder, let name): try rename(item: item, folder: folder, name: name)
        case .unlink(let file): try unlink(file: file)
        case .removeFolder(let folder): try removeFolder(folder: folder)
        case .read(let file): try await read(file: file)
        case .evict(let file): try evict(file: file)
        case .resolve(let item, let keep): try resolve(item: item, keep: keep)
        case .remoteWrite(let folder, let name, let length): try remoteWrite(folder: folder, name: name, length: length)
        case .remoteMakeFolder(let folder, let name): try remoteMakeFolder(folder: folder, name: name)
        case .remoteRename(let item, let folder, let name): try remoteRename(item: item, folder: folder, name: name)
        case .remoteDelete(let item): try remoteDelete(item: item)
        case .takeUploads(let count): takeUploads(count: count)
        case .sendUpload(let pick, let fault): await sendUpload(pick: pick, fault: fault)
        case .finishUpload(let pick): try finishUpload(pick: pick)
        case .fetchChanges: try await fetchChanges()
        case .applyChanges: try applyChanges()
        case .listFolder(let pick): try await listFolder(pick: pick)
        case .takeAgain: try await takeAgain()
        case .keepConflicts: try await keepConflicts()
        case .expireAnchors:
            note("the remote trims its history")
            provider.expireAnchors(in: .drive)
        case .passTime(let seconds):
            note("\(seconds) s pass")
            clock.advance(by: .seconds(seconds))
        case .network(let offline):
            note(offline ? "the network goes down" : "the network is back")
            provider.isOffline = offline
        case .flush:
            note("group write")
            fileSystem.flushDeferredWrites()
            stepWasDurable = true
        case .remount: try await remount()
        case .crash: try await crash()
        case .settle: try await settle()
        }
    }

    // MARK: Notes and failures

    /// Whether every step notes the tree it left (`REFTEST_TRACE=1`).
    static let traces = ProcessInfo.processInfo.environment["REFTEST_TRACE"] == "1"

    /// Notes the tree here (inode, state, whether a folder is listed) and the remote's.
    func trace() throws {
        let observed = try observe()
        let here = observed.nodes.sorted { $0.key < $1.key }.map { path, node in
            let listed = node.kind == .directory ? (node.childrenListed ? " listed" : " unlisted") : ""
            let pending = (node.needsCreate ? " new" : "") + (node.metadataDirty ? " moved" : "")
            return "/\(path) #\(node.ino) \(node.state.name)\(listed)\(pending)"
        }
        note("  here: " + here.joined(separator: ", "))
        note("  remote: " + remoteTree().keys.sorted().map { "/" + $0 }.joined(separator: ", "))
    }

    /// Records what the step did.
    func note(_ line: String) {
        log.append("\(step): \(line)")
    }

    /// A failure of the step running.
    func failure(_ kind: String, _ message: String) -> ReferenceFailure {
        ReferenceFailure(step: step, kind: kind, message: message, log: log)
    }

    /// A short name for a content in logs: its writer's tag and length.
    static func tag(_ content: String) -> String {
        let head = content.prefix { $0 != "-" }
        return "\(head)(\(content.utf8.count))"
    }

    // MARK: Paths

    /// `name` in `folder`.
    static func join(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : folder + "/" + name }

    /// The folder of `path`.
    static func parent(_ path: String) -> String {
        path.split(separator: "/").dropLast().joined(separator: "/")
    }

    /// The last component of `path`.
    static func name(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? "" }

    /// The model's folders, root first.
    var localFolders: [String] { model.filter { $0.value == .directory }.map(\.key).sorted() }
    /// The model's files.
    var localFiles: [String] {
        model.filter { if case .file = $0.value { true } else { false } }.map(\.key).sorted()
    }
}
