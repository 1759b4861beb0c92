import FolioCore
import Foundation
import Logging
import Synchronization
import SystemPackage

/// Describes content while it is here and keeps the desktop's thumbnail cache right for the mount (File
/// Provider's thumbnails and content types, on the freedesktop standards).
///
/// - A file whose content is here at a provider version (uploaded from here, downloaded, pinned) and that has no
///   description of that version is described: its type (``ContentTypes``), and thumbnails of every
///   ``ThumbnailSize`` made by the machine's thumbnailer for the type (``ThumbnailerRun``, from the file in the
///   content cache, never from the mount). The description goes to the node (so a placeholder shows the type as
///   `user.mime_type`) and, with the thumbnails, to the provider, so other devices have them without content.
/// - A placeholder without a description of its version asks the provider for one.
/// - A file with a description has the matching entries in the thumbnail cache, for its path in the mount and its
///   modification time: the thumbnails (from the provider, or just made), or a `fail/` record when the
///   thumbnailer failed on it. A rename or move moves them, a new version replaces them, a deleted item takes
///   them away. Only entries this process wrote are moved or removed (a restart forgets which it wrote; entries
///   for paths that no longer exist are left to the desktop's own cleaning).
///
/// It runs in the background, woken by the core whenever nodes are stored or removed; a description the provider
/// could not take (offline) is made again and sent at a later wake-up.
public final class Describer: ContentDescribing, Sendable {
    private let fileSystem: FolioFileSystem
    private let provider: any Provider
    private let logger: Logger
    private let cache: ThumbnailCache?
    private let mountpoint: String
    private let viewRoot: UInt64
    private let thumbnailers: Thumbnailers
    private let run: ThumbnailerRun
    private let workFolder: String
    private let wake = WakeSignal()
    private let book = Mutex(Book())
    /// The thumbnailer of each type met so far (`nil`: none): deciding it asks GIO whether the type is a kind of
    /// each type every thumbnailer names, too dear to do again for every file of a big tree.
    private let thumbnailerOfType = Mutex<[String: Thumbnailer?]>([:])
    private let loop = Mutex<Task<Void, Never>?>(nil)

    private struct Book {
        /// The cache entries this process wrote, by inode.
        var written: [UInt64: Written] = [:]
        /// Described here, not yet stored by the provider (it was offline, say), with the thumbnails to send, to
        /// be sent again at the next wake-up; at most ``pendingKept`` (beyond, the oldest stay on this device).
        var pending: [UInt64: PendingSend] = [:]
        /// Each folder's parent and name when last seen: a folder whose place changed moves the thumbnails below it.
        var folders: [UInt64: String] = [:]
        /// Placeholders the provider had no description of their version for, and when to ask again.
        var asks = DescriptionAsks(schedule: Describer.askAgain, limit: Describer.followedPlaceholders)
        var refusalLogged = false
    }

    /// A description (and thumbnails) the provider has still to take.
    private struct PendingSend: Sendable {
        var description: ContentDescription
        var thumbnails: [ThumbnailSize: [UInt8]]
        var item: ItemID
        var container: ContainerID
        var name: String
        var since: ContinuousClock.Instant
    }

    /// How many descriptions wait to be sent again at most.
    static let pendingKept = 256

    /// One file's entries in the thumbnail cache.
    private struct Written: Equatable {
        var uri: String
        var modificationTime: Timestamp
        var version: String
        var outcome: ThumbnailOutcome
    }

    /// How long a wake-up waits for more changes to gather (and waits again while more come).
    static let gathering: Duration = .milliseconds(200)
    /// The longest a wake-up waits for changes to stop coming.
    static let longestGathering: Duration = .seconds(30)
    /// How often descriptions the provider did not take are tried again.
    static let retryInterval: Duration = .seconds(15)
    /// When a placeholder without a description is asked about again, after each ask (then no more: its content
    /// was never on a device that describes, until it changes).
    static let askAgain: [Duration] = [.seconds(1), .seconds(3), .seconds(10), .seconds(30), .seconds(120)]
    /// The most placeholders asked about again at once (``DescriptionAsks``).
    static let followedPlaceholders = 10_000

    /// A describer for the mount at `mountpoint`, which shows the tree below `viewRoot`; `cache` `nil` keeps no
    /// thumbnail cache (no home folder). `workFolder` holds thumbnailers' inputs and outputs for a moment.
    public init(
        fileSystem: FolioFileSystem, provider: any Provider, logger: Logger, cache: ThumbnailCache?,
        mountpoint: String, viewRoot: UInt64, workFolder: String,
        thumbnailers: Thumbnailers = .installed(), run: ThumbnailerRun = ThumbnailerRun()
    ) {
        self.fileSystem = fileSystem
        self.provider = provider
        self.logger = logger
        self.cache = cache
        self.mountpoint = mountpoint.hasSuffix("/") ? String(mountpoint.dropLast()) : mountpoint
        self.viewRoot = viewRoot
        self.workFolder = workFolder
        self.thumbnailers = thumbnailers
        self.run = run
    }

    public func nodesChanged() {
        wake.signal()
    }

    /// What the name alone says of a placeholder: a type shared-mime-info is sure of, which no thumbnailer here
    /// handles (where one does, the description of its content, once made, says more). Never stored.
    public func typeOfName(_ name: String) -> String? {
        guard let type = ContentTypes.typeOfName(name), thumbnailer(for: type) == nil else { return nil }
        return type
    }

    /// The thumbnailer for `type`, remembered.
    private func thumbnailer(for type: String) -> Thumbnailer? {
        if let known = thumbnailerOfType.withLock({ $0[type] }) { return known }
        let found = thumbnailers.thumbnailer(for: type)
        thumbnailerOfType.withLock { $0[type] = found }
        return found
    }

    /// Starts the background loop.
    public func start() {
        mkdir(workFolder, 0o700)
        // Nodes stored before the describer was connected (the container roots' listing) are taken at once.
        wake.signal()
        let task = Task { [self] in
            while !Task.isCancelled {
                let nextAsk = book.withLock { $0.asks.nextDue }
                let wait = nextAsk.map { min(max($0 - .now, .zero), Self.retryInterval) } ?? Self.retryInterval
                await wake.wait(upTo: wait)
                guard !Task.isCancelled else { break }
                await gather()
                let now = ContinuousClock.now
                let retried = book.withLock { $0.asks.dueAt(now) }
                await process(fileSystem.takeDescriptionWork().union(retried))
                await sendPending()
            }
        }
        loop.withLock { $0 = task }
    }

    /// Waits until the nodes to describe stop coming (``gathering`` without a new one), at most ``longestGathering``:
    /// a walk of a big tree of placeholders (`find`, a file manager) stores every folder it lists, and describing
    /// belongs after it, not in its way.
    private func gather() async {
        let deadline = ContinuousClock.now + Self.longestGathering
        var seen = -1
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.gathering)
            let count = fileSystem.descriptionWorkCount
            if count == seen || ContinuousClock.now >= deadline { return }
            seen = count
        }
    }

    /// Stops the background loop.
    public func stop() {
        loop.withLock { $0?.cancel() }
    }

    /// The thumbnail of `size` of a file: its content is described first if it is here and is not yet.
    /// `.noAttribute` with the reason when there is none.
    public func thumbnail(of ino: UInt64, size: ThumbnailSize) async throws(FolioError) -> [UInt8] {
        guard let node = fileSystem.node(ino), node.kind == .file else { throw .invalidArgument("not a file") }
        if fileSystem.contentDescription(of: ino) == nil {
            if fileSystem.describableContent(of: ino) != nil {
                await describeHere(ino)
            } else if case .placeholder(let placeholder) = fileSystem.descriptionSubjects([ino])[ino] {
                await askProvider([placeholder])
            }
        }
        guard let description = fileSystem.contentDescription(of: ino) else {
            if let type = typeOfName(node.name) {
                throw .noAttribute("no thumbnail: no thumbnailer here handles \(type)")
            }
            throw .noAttribute("no thumbnail: the content of this version was never here to make one (open or download it)")
        }
        switch description.thumbnails {
        case .none: throw .noAttribute("no thumbnail: no thumbnailer here handles \(description.contentType ?? "its type")")
        case .failed: throw .noAttribute("no thumbnail: the thumbnailer failed on this version")
        case .made: break
        }
        do {
            let container = node.remoteContainer ?? node.container
            guard let png = try await provider.thumbnail(
                of: node.itemID, in: container, version: description.version, size: size)
            else { throw FolioError.noAttribute("no thumbnail: the remote has none of this version") }
            return png
        } catch {
            throw FolioError(error)
        }
    }

    /// Takes care of nodes that were stored or removed.
    func process(_ inos: Set<UInt64>) async {
        // Asked about again below if still without a description.
        book.withLock { book in for ino in inos { book.asks.asking(ino) } }
        let subjects = fileSystem.descriptionSubjects(inos)
        var placeholders: [PlaceholderToDescribe] = []
        var folderChanged = false
        for ino in inos.sorted() {
            switch subjects[ino] {
            case nil:
                clear(ino, gone: true)
            case .folder(let place):
                // Only a change of place (a rename or move, here or on the remote) moves what is below it, not the
                // change of time every new child brings.
                let moved = book.withLock { book in book.folders.updateValue(place, forKey: ino) != place }
                folderChanged = folderChanged || moved
            case .described(let description):
                await keepCache(ino, description)
            case .describable:
                await describeHere(ino)
            case .placeholder(let placeholder):
                placeholders.append(placeholder)
            case .other:
                clear(ino, gone: false)
            }
        }
        if !placeholders.isEmpty { await askProvider(placeholders) }
        if folderChanged {
            for ino in book.withLock({ Array($0.written.keys) }).sorted() {
                if let description = fileSystem.contentDescription(of: ino) { await keepCache(ino, description) }
            }
        }
    }

    /// Asks the provider for the descriptions of placeholders, one call per container and 500 items.
    private func askProvider(_ placeholders: [PlaceholderToDescribe]) async {
        for (container, items) in Dictionary(grouping: placeholders, by: \.container) {
            for start in stride(from: 0, to: items.count, by: 500) {
                let chunk = items[start..<min(start + 500, items.count)]
                let found: [ItemID: ContentDescription]
                do {
                    found = try await provider.descriptions(of: chunk.map(\.id), in: container)
                } catch {
                    // Offline, say: asked again later (the same bounded asks as for a description not there yet).
                    logger.debug("cannot ask for descriptions in \(container), will ask again: \(error)")
                    for item in chunk { awaitDescription(of: item.ino, version: item.version) }
                    continue
                }
                for item in chunk {
                    guard let description = found[item.id], description.version == item.version else {
                        clear(item.ino, gone: false)
                        if typeOfName(item.name) != nil {
                            // Nothing was sent for it: what the name says is all (see describeHere), and the core
                            // asks for it when it is read: nothing to store, nothing to ask again.
                            book.withLock { $0.asks.forget(item.ino) }
                        } else {
                            awaitDescription(of: item.ino, version: item.version)
                        }
                        continue
                    }
                    book.withLock { $0.asks.forget(item.ino) }
                    if fileSystem.recordDescription(description, of: item.ino) { await keepCache(item.ino, description) }
                }
            }
        }
    }

    /// Schedules the next ask about a placeholder the provider had no description for (a new version starts over).
    private func awaitDescription(of ino: UInt64, version: String) {
        _ = book.withLock { $0.asks.noDescription(of: ino, version: version, at: .now) }
    }

    /// Describes content that is here, records the description, sends it to the provider and fills the cache.
    private func describeHere(_ ino: UInt64) async {
        guard let content = fileSystem.describableContent(of: ino), let node = fileSystem.node(ino) else { return }
        // The type first, from the file in the content cache (most documents have no thumbnailer: nothing more).
        guard let sample = Self.sample(of: content.file.string) else { return }
        let type = ContentTypes.guess(name: content.name, sample: sample)
        var thumbnails: [ThumbnailSize: [UInt8]] = [:]
        var outcome = ThumbnailOutcome.none
        if let type, let thumbnailer = thumbnailer(for: type) {
            let folder = "\(workFolder)/\(UUID().uuidString)"
            guard mkdir(folder, 0o700) == 0 else { return }
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // The thumbnailer sees the document under its own name (some go by the extension), through a hard
            // link to the immutable file in the content cache; a copy where a link cannot be made.
            let safeName = content.name.replacingOccurrences(of: "/", with: "_")
            var input = "\(folder)/\(safeName.isEmpty ? "document" : safeName)"
            if link(content.file.string, input) != 0,
                (try? FileManager.default.copyItem(atPath: content.file.string, toPath: input)) == nil
            {
                input = content.file.string  // under its name in the cache, then
            }
            outcome = .made
            for size in ThumbnailSize.allCases {
                guard let png = await run.run(
                    thumbnailer, input: input, size: size.pixels, output: "\(folder)/.thumbnail-\(size.rawValue).png")
                else {
                    logger.info("thumbnailer \(thumbnailer.file) made no thumbnail of \(content.name) (\(type))")
                    outcome = .failed
                    thumbnails.removeAll()
                    break
                }
                thumbnails[size] = png
            }
        }
        let description = ContentDescription(version: content.version, contentType: type, thumbnails: outcome)
        guard fileSystem.recordDescription(description, of: ino) else { return }
        logger.debug("described \(content.name): \(type ?? "no type"), thumbnails \(outcome.rawValue)")
        // What every device can tell from the name alone (a `.txt` of text, no thumbnailer) is not sent: most
        // documents cost the remote nothing.
        guard outcome != .none || type != ContentTypes.typeOfName(content.name) else {
            await keepCache(ino, description)
            return
        }
        await send(PendingSend(
            description: description, thumbnails: thumbnails, item: node.itemID,
            container: node.remoteContainer ?? node.container, name: content.name, since: .now), for: ino)
        await keepCache(ino, description, made: thumbnails)
    }

    /// Sends a description to the provider; kept to be sent again if it could not take it now.
    private func send(_ pending: PendingSend, for ino: UInt64) async {
        do {
            try await provider.storeDescription(
                pending.description, thumbnails: pending.thumbnails, of: pending.item, in: pending.container)
            book.withLock { _ = $0.pending.removeValue(forKey: ino) }
        } catch FolioError.notSupported(let reason) {
            let first = book.withLock { book in
                book.pending.removeValue(forKey: ino)
                defer { book.refusalLogged = true }
                return !book.refusalLogged
            }
            if first { logger.notice("types and thumbnails stay on this device: \(reason)") }
        } catch {
            let failure = FolioError(error)
            var clears = failure.isRetryable
            if case .noSpace = failure { clears = true }  // a full remote is freed some day
            guard clears else {
                // What will not clear by itself (refused access, say): the description stays on this device.
                logger.notice("the remote refused the description of \(pending.name); it stays on this device: \(failure)")
                book.withLock { _ = $0.pending.removeValue(forKey: ino) }
                return
            }
            logger.info("the remote did not take the description of \(pending.name), will try again: \(failure)")
            book.withLock { book in
                book.pending[ino] = pending
                if book.pending.count > Self.pendingKept,
                    let oldest = book.pending.min(by: { $0.value.since < $1.value.since })?.key
                {
                    book.pending.removeValue(forKey: oldest)
                }
            }
        }
    }

    /// Sends again what the provider did not take, while the files are still at the versions described.
    private func sendPending() async {
        let waiting = book.withLock { $0.pending }
        for (ino, pending) in waiting.sorted(by: { $0.value.since < $1.value.since }) {
            guard fileSystem.contentDescription(of: ino) == pending.description else {
                book.withLock { _ = $0.pending.removeValue(forKey: ino) }
                continue
            }
            await send(pending, for: ino)
        }
    }

    /// The first bytes of a file, for the type's magic.
    private static func sample(of path: String) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: ContentTypes.sampleSize) else { return nil }
        return [UInt8](data)
    }

    /// Makes the cache entries of a file match its description, path and modification time.
    private func keepCache(_ ino: UInt64, _ description: ContentDescription, made: [ThumbnailSize: [UInt8]] = [:]) async {
        guard let cache else { return }
        guard let node = fileSystem.node(ino), let relative = fileSystem.path(of: ino, below: viewRoot),
            let uri = ThumbnailCache.uri(ofPath: relative.isEmpty ? mountpoint : "\(mountpoint)/\(relative)")
        else {
            clear(ino, gone: fileSystem.node(ino) == nil)
            return
        }
        let entry = Written(
            uri: uri, modificationTime: node.modificationTime, version: description.version,
            outcome: description.thumbnails)
        let previous = book.withLock { $0.written[ino] }
        if previous == entry && made.isEmpty && present(entry, in: cache) { return }
        do {
            switch description.thumbnails {
            case .made:
                for size in ThumbnailSize.allCases {
                    if previous == entry,
                        cache.modificationTime(of: uri, size: size) == cache.text(of: entry.modificationTime),
                        made[size] == nil
                    {
                        continue
                    }
                    var png = made[size] ?? kept(previous, size: size, version: description.version, in: cache)
                    if png == nil {
                        png = try await provider.thumbnail(
                            of: node.itemID, in: node.remoteContainer ?? node.container, version: description.version,
                            size: size)
                    }
                    guard let png else { continue }
                    try cache.write(png, of: uri, size: size, modificationTime: entry.modificationTime)
                }
            case .failed:
                for size in ThumbnailSize.allCases { unlink(cache.path(of: uri, size: size)) }
                try cache.writeFailure(of: uri, modificationTime: entry.modificationTime)
            case .none:
                // Nothing of it in the cache (a leftover of an earlier version or place goes).
                if let previous { cache.remove(previous.uri) }
                book.withLock { _ = $0.written.removeValue(forKey: ino) }
                return
            }
        } catch {
            logger.info("cannot keep the thumbnails of \(relative): \(error)")
            return
        }
        if let previous, previous.uri != uri { cache.remove(previous.uri) }
        book.withLock { $0.written[ino] = entry }
    }

    /// The thumbnail of `size` this process wrote before for the same version (at another path or time), to
    /// move it rather than fetch it again.
    private func kept(_ previous: Written?, size: ThumbnailSize, version: String, in cache: ThumbnailCache) -> [UInt8]? {
        guard let previous, previous.version == version, previous.outcome == .made,
            let data = FileManager.default.contents(atPath: cache.path(of: previous.uri, size: size))
        else { return nil }
        return [UInt8](data)
    }

    /// Whether the cache still holds an entry as written.
    private func present(_ entry: Written, in cache: ThumbnailCache) -> Bool {
        switch entry.outcome {
        case .made:
            return ThumbnailSize.allCases.allSatisfy {
                cache.modificationTime(of: entry.uri, size: $0) == cache.text(of: entry.modificationTime)
            }
        case .failed: return access(cache.failurePath(of: entry.uri), F_OK) == 0
        case .none: return true
        }
    }

    /// Removes the entries this process wrote for a node, and forgets the node's asks when it is `gone`.
    private func clear(_ ino: UInt64, gone: Bool) {
        let previous = book.withLock { book -> Written? in
            if gone { book.asks.forget(ino) }
            return book.written.removeValue(forKey: ino)
        }
        guard let previous else { return }
        cache?.remove(previous.uri)
    }
}
