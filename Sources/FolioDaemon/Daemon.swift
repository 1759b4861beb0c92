import Dispatch
import FolioCore
import FolioDesktop
import FolioFUSE
import FolioProviderLocal
import FolioProviderWebDAV
import FolioReplay
import FolioStore
import FolioSync
import Foundation
import Logging
import Synchronization
import SystemPackage

/// The composition root: builds the object graph from a configuration, mounts, runs the services (uploader,
/// poller, control socket) and tears everything down when the mount ends.
public final class Daemon: @unchecked Sendable {
    let configuration: DaemonConfiguration
    let logger: Logger
    /// More views of the same state mounted at other mountpoints (`folio mount --app ID --of MOUNTPOINT`),
    /// by mountpoint. They live as long as the daemon's own mount.
    let attachedViews = Mutex(AttachedViews())
    /// Signs and checks bookmarks with the state folder's key (set once the state is open).
    let bookmarkSigner = Mutex<BookmarkSigner?>(nil)
    /// The provider and poller, for control requests that reach them (set once they exist).
    let links = Mutex<DaemonLinks?>(nil)

    /// Creates a daemon.
    public init(configuration: DaemonConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Lets the daemon open as many files as the system allows it (the soft limit, often 1,024, up to the hard
    /// one): every upload in flight reads its version through a descriptor of its own (512 at most), besides
    /// the files users have open.
    private func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let soft = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            logger.debug("open files limit raised from \(soft) to \(limit.rlim_max)")
        }
    }

    /// Mounts and serves until unmounted. `ready` is called once the mount is up (or with the error that
    /// stopped it from coming up). Must be called from a thread that is not running Swift concurrency.
    public func run(ready: (Result<Void, FolioError>) -> Void) -> Int32 {
        // A write to a pipe whose reader is gone (a replay helper someone killed) fails with EPIPE, never
        // kills the daemon.
        signal(SIGPIPE, SIG_IGN)
        raiseDescriptorLimit()
        let services: Services
        do {
            services = try start()
        } catch {
            ready(.failure(error))
            return 1
        }
        ready(.success(()))
        logger.info("mounted \(configuration.remote) at \(configuration.mountpoint)")
        let status = services.mount.run()
        logger.info("unmounting \(configuration.mountpoint)")
        services.control.stop()
        detachAllViews()
        services.poller.cancel()
        services.prefetcher?.stop()
        services.storeReader.cancel()
        let storeReader = services.storeReader
        blockOn { await storeReader.value }
        services.uploader.stop()
        services.keeper.stop()
        services.describer.stop()
        services.recentFiles?.stop()
        services.mount.unmount()
        services.fileSystem.flushDeferredWrites()
        let remote = services.remote
        blockOn { await remote.close() }
        services.lock.release()
        return status
    }

    private struct Services {
        var fileSystem: FolioFileSystem
        var mount: FUSEMount
        var uploader: Uploader<ContinuousClock>
        var keeper: ContentKeeper
        var describer: Describer
        var remote: OpenedRemote
        var poller: Task<Void, Never>
        /// Reads the rest of the store after the working set (``readStoreInBackground(_:then:)``).
        var storeReader: Task<Void, Never>
        var recentFiles: RecentFiles?
        /// Lists the tree in the background (`--prefetch-listing`).
        var prefetcher: ListingPrefetcher?
        var control: ControlServer
        var lock: StateLock
    }

    private func start() throws(FolioError) -> Services {
        // Refused before anything is mounted: a control socket in a folder someone else controls is theirs.
        _ = try RuntimePaths.privateRuntimeDirectory(creating: true)
        let mountpoint = RuntimePaths.canonical(configuration.mountpoint.string)
        if let running = ControlClient.runningMount(at: mountpoint) {
            throw .busy("\(mountpoint) is already a Folio mount of \(running.remote ?? "another remote")")
        }
        let folder = try StateFolder.prepare(at: configuration.stateDirectory)
        if let notice = folder.notice { logger.notice("\(notice)") }
        do throws(FolioError) {
            let lock = try StateLock.acquire(
                in: folder.path, remote: configuration.remote.description, mountpoint: mountpoint)
            do throws(FolioError) {
                return try start(lock: lock)
            } catch {
                lock.release()
                throw error
            }
        } catch {
            folder.discardIfCreated()
            throw error
        }
    }

    private func start(lock: StateLock) throws(FolioError) -> Services {
        let store = try SQLiteMetadataStore(path: configuration.stateDirectory.appending("metadata.sqlite").string)
        let signer = try BookmarkSigner.load(stateFolder: configuration.stateDirectory)
        bookmarkSigner.withLock { $0 = signer }
        let cache = try ContentCache(directory: configuration.stateDirectory.appending("content"))
        let fileSystem = try FolioFileSystem(
            store: store, cache: cache,
            configuration: FileSystemConfiguration(
                writeWaitTimeout: configuration.writeWaitTimeout, defaultUID: getuid(), defaultGID: getgid(),
                groupWriteDelay: configuration.groupWriteDelay, saveWindow: configuration.saveWindow,
                indexers: configuration.indexers, loadsOnDemand: true),
            logger: logger)
        let remote = try openRemote(recorded: fileSystem.recordedRemoteID)
        do throws(FolioError) {
            return try start(lock: lock, fileSystem: fileSystem, cache: cache, remote: remote)
        } catch {
            blockOn { await remote.close() }
            throw error
        }
    }

    private func start(
        lock: StateLock, fileSystem: FolioFileSystem, cache: ContentCache, remote: OpenedRemote
    ) throws(FolioError) -> Services {
        try fileSystem.recordRemoteID(remote.remoteID)
        let provider = remote.provider
        let poller = RemotePoller(
            fileSystem: fileSystem, provider: provider, logger: logger, interval: configuration.pollInterval,
            push: configuration.push)
        // Ready once the containers are known: folders are listed when they are first looked at.
        _ = blockOn { await poller.start() }
        fileSystem.connect(lister: FolderLister(fileSystem: fileSystem, provider: provider, logger: logger))
        links.withLock { $0 = DaemonLinks(provider: provider, poller: poller) }
        if case .app(let app) = configuration.view {
            try ensureContainer(
                Container(
                    id: app, displayName: configuration.newContainerDisplayName ?? app.rawValue,
                    isPublic: configuration.newContainerIsPublic),
                fileSystem: fileSystem)
        }

        let rootIno = try fileSystem.rootIno(of: configuration.view)
        let mount = FUSEMount(
            fileSystem: fileSystem,
            options: MountOptions(
                mountpoint: configuration.mountpoint.string, source: configuration.remote.description,
                allowOther: configuration.allowOther, debug: configuration.debug, rootIno: rootIno),
            logger: logger,
            front: replayer(of: fileSystem, at: configuration.mountpoint.string, rootIno: rootIno))
        let materializer = Materializer(fileSystem: fileSystem, provider: provider, logger: logger)
        let uploader = Uploader(
            fileSystem: fileSystem, provider: provider, logger: logger, quietPeriod: configuration.uploadQuietPeriod)
        fileSystem.connect(materializer: materializer, uploader: uploader, invalidator: mount.invalidator)
        let statistics = cache.statistics()
        let cacheLimit = configuration.cacheLimit.bytes(
            freeSpace: Int64(statistics.availableBlocks &* statistics.blockSize))
        let keeper = ContentKeeper(
            fileSystem: fileSystem, materializer: materializer, provider: provider, logger: logger,
            cacheLimit: cacheLimit)
        fileSystem.connect(keeper: keeper)
        fileSystem.connect(refresher: poller)
        let describer = Describer(
            fileSystem: fileSystem, provider: provider, logger: logger, cache: ThumbnailCache.ofCurrentUser(),
            mountpoint: RuntimePaths.canonical(configuration.mountpoint.string),
            viewRoot: try fileSystem.rootIno(of: configuration.view),
            workFolder: configuration.stateDirectory.appending("thumbnailing").string)
        fileSystem.connect(describer: describer)
        let recentFiles = RecentFiles.sessionFile().map { file in
            RecentFiles(
                fileSystem: fileSystem, logger: logger, path: file,
                mountpoint: RuntimePaths.canonical(configuration.mountpoint.string), view: configuration.view)
        }
        if let recentFiles { fileSystem.connect(usageObserver: recentFiles) }
        logger.info("cache limit: \(cacheLimit) bytes (\(configuration.cacheLimit))")
        try mount.mount()
        // The container roots, on a state's first mount, are listed at once (lookups arriving meanwhile wait for the
        // same listing); the control socket answers that the mount is ready once they are, or after
        // `rootListingWait` (a big root goes on listing in the background).
        let rootsListed = DispatchSemaphore(value: 0)
        Task {
            await fileSystem.listContainerRoots()
            rootsListed.signal()
        }
        _ = rootsListed.wait(timeout: .now() + Self.rootListingWait)

        let canonicalMountpoint = RuntimePaths.canonical(configuration.mountpoint.string)
        let view = configuration.view
        let control = ControlServer(
            path: RuntimePaths.controlSocket(forMountpoint: canonicalMountpoint).string
        ) { [self] request in
            handle(request, fileSystem: fileSystem, describer: describer, view: view, mountpoint: canonicalMountpoint)
        }
        do {
            try control.start()
        } catch {
            mount.unmount()
            throw error
        }
        // What failed for a reason that needed the user is tried again at every mount (DESIGN.md §2 "Upload").
        let retried = fileSystem.retryFailedUploads()
        if retried > 0 { logger.notice("retrying \(retried) uploads that failed before") }
        uploader.start()
        let storeReader = readStoreInBackground(fileSystem, then: keeper)
        describer.start()
        recentFiles?.start()
        let pollTask = Task { await poller.run() }
        let prefetcher = configuration.prefetchListing
            ? ListingPrefetcher(fileSystem: fileSystem, root: try fileSystem.rootIno(of: view), logger: logger) : nil
        prefetcher?.start()
        return Services(
            fileSystem: fileSystem, mount: mount, uploader: uploader, keeper: keeper, describer: describer, remote: remote,
            poller: pollTask, storeReader: storeReader, recentFiles: recentFiles, prefetcher: prefetcher,
            control: control, lock: lock)
    }

    /// Reads what the store holds beyond the working set, a few folders at a time, while the mount answers (the
    /// mount reads a folder itself when it needs it first); then starts the content keeper, which counts the
    /// bytes of every item. A store that cannot be read now is tried again, less and less often.
    private func readStoreInBackground(
        _ fileSystem: FolioFileSystem, then keeper: ContentKeeper
    ) -> Task<Void, Never> {
        // (Two folders per turn, a few milliseconds: the turn holds one of the cooperative threads, which the
        // lookups that wait for a listing share.)
        Task.detached(priority: .utility) { [logger] in
            var pause = Duration.milliseconds(100)
            while !Task.isCancelled {
                do {
                    if try fileSystem.loadStoredFolders(count: 2) { break }
                    pause = .milliseconds(100)
                    await Task.yield()
                } catch {
                    logger.warning("cannot read folders from the store now (trying again): \(error)")
                    try? await Task.sleep(for: pause)
                    pause = min(pause * 2, .seconds(10))
                }
            }
            if Task.isCancelled { return }
            logger.debug("every stored item is in memory")
            keeper.start()
        }
    }

    /// Opens the remote: a folder (``openFolder(_:recorded:)``) or a WebDAV server (``openServer(_:recorded:)``).
    /// A state synced with a remote (`recorded`, its identity) is never pointed at another one.
    private func openRemote(recorded: String?) throws(FolioError) -> OpenedRemote {
        switch configuration.remote {
        case .folder(let folder): .local(try openFolder(folder, recorded: recorded))
        case .webDAV(let server): try openServer(server, recorded: recorded)
        }
    }

    /// Opens the remote folder, making it one if it is new. A folder that is not the remote the state was synced
    /// with (an unmounted share leaves an empty one behind) is refused with the reason, and nothing is changed,
    /// neither there nor here.
    private func openFolder(_ remote: FilePath, recorded: String?) throws(FolioError) -> LocalProvider {
        if let recorded, LocalProvider.remoteID(at: remote) != recorded {
            let found = LocalProvider.remoteID(at: remote).map { "another remote (id \($0))" }
                ?? (LocalProvider.isRemote(at: remote) ? "a remote from before identities" : "no Folio remote")
            throw .offline(
                "\(remote) is not the remote this state was synced with (id \(recorded)): it holds \(found). "
                    + "Is a share not mounted, or was the folder replaced? Nothing was changed; mount the remote "
                    + "back and try again")
        }
        if !LocalProvider.isRemote(at: remote), let refusal = LocalProvider.adoptionRefusal(of: remote) {
            throw .invalidArgument(refusal)
        }
        try refuseOverlap(remote: remote)
        do {
            // A new or empty folder becomes a new remote, a folder of documents is adopted as it is.
            try LocalProvider.prepareRemote(at: remote)
            return try LocalProvider(root: remote, simulation: configuration.simulation)
        } catch {
            throw error as? FolioError ?? .io("cannot open remote \(remote): \(error)")
        }
    }

    /// What an app view's control socket answers: commands about what the view shows. Granting, revoking,
    /// mounting another view and reading or writing outside the mount are the user's, through the full view.
    static let appViewCommands: Set<String> = Set([
        "status", "retry", "pin", "unpin", "evict", "download", "versions", "resolve", "thumbnail", "bookmark",
        "resolve-bookmark", "recents",
    ]).union(tagCommands)

    /// The longest the control socket waits, at a first mount, for the container roots to be listed.
    static let rootListingWait: DispatchTimeInterval = .seconds(5)

    /// The command that starts the replay helper of a mount: this very executable (`/proc/self/exe` names it
    /// even after a reinstall replaced its file) with `replay-helper`.
    static let replayHelper = ["/proc/self/exe", "replay-helper"]

    /// What stands in front of the handlers of a mount of `fileSystem` at `mountpoint` showing `rootIno`: the
    /// replay of remote changes through the mount, so its inotify watchers see them.
    func replayer(of fileSystem: FolioFileSystem, at mountpoint: String, rootIno: UInt64) -> ChangeReplayer {
        ChangeReplayer(
            fileSystem: fileSystem, mountpoint: mountpoint, rootIno: rootIno, helperCommand: Self.replayHelper,
            othersMayUse: configuration.allowOther, logger: logger)
    }

    /// Serves as the replay helper of a mount (`folio replay-helper MOUNTPOINT DEVICE`, started by the daemon):
    /// makes the system calls that replay remote changes on the mount, until standard input ends. Returns the
    /// process's exit status.
    public static func serveReplayHelper(mountpoint: String, device: String) -> Int32 {
        ReplayHelper.serve(mountpoint: mountpoint, device: device)
    }

    /// Runs `body` on the cooperative pool and waits for its result. Only from threads that are not part of
    /// it (start-up, control requests, which are served on threads of their own).
    func blockOn<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> Value {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Value?
        Task {
            result = await body()
            done.signal()
        }
        done.wait()
        return result!
    }

    /// Answers one control request that arrived on the socket of the mount at `mountpoint`, which shows `view`.
    func handle(
        _ request: ControlRequest, fileSystem: FolioFileSystem, describer: Describer?, view: NamespaceView,
        mountpoint: String
    ) -> ControlResponse {
        var response = ControlResponse(ok: true)
        response.pid = getpid()
        response.mountpoint = mountpoint
        response.remote = configuration.remote.description
        response.stateDirectory = configuration.stateDirectory.string
        response.view = view.description
        response.controlSocket = RuntimePaths.controlSocket(forMountpoint: mountpoint).string
        response.isAttachedView = attachedViews.withLock { $0.views[mountpoint] != nil }
        if case .app(let app) = view, !Self.appViewCommands.contains(request.command) {
            return ControlResponse(
                ok: false,
                error: "\(request.command) is not available through the app view of \(app), whose socket an app "
                    + "confined to its view may reach: use the full view's mount")
        }
        // Commands answered elsewhere get this daemon's identification added to their answer.
        if let answer = handleDocumentModeCommand(request, fileSystem: fileSystem, view: view)
            ?? handleBookmarkCommand(request, fileSystem: fileSystem, view: view, mountpoint: mountpoint)
            ?? handleContentCommand(request, fileSystem: fileSystem, describer: describer, view: view) {
            guard answer.ok else { return answer }
            var completed = answer
            completed.pid = response.pid
            completed.mountpoint = response.mountpoint
            completed.remote = response.remote
            completed.stateDirectory = response.stateDirectory
            completed.view = response.view
            completed.controlSocket = response.controlSocket
            completed.isAttachedView = response.isAttachedView
            return completed
        }
        if let answer = handleTagCommand(request, fileSystem: fileSystem, view: view) {
            guard answer.ok else { return answer }
            (response.message, response.data) = (answer.message, answer.data)
            return response
        }
        switch request.command {
        case "attach":
            guard let app = request.app, let target = request.target else {
                return ControlResponse(ok: false, error: "attach needs an app container id and a mountpoint")
            }
            do {
                try ensureContainer(
                    Container(
                        id: ContainerID(app), displayName: request.displayName ?? app, isPublic: request.isPublic ?? false),
                    fileSystem: fileSystem)
                try attachView(.app(ContainerID(app)), at: target, fileSystem: fileSystem)
                response.message = "mounted the app view of \(app) at \(target)"
            } catch {
                return ControlResponse(ok: false, error: "\(error)")
            }
        case "grant":
            guard let path = request.path, let app = request.app else {
                return ControlResponse(ok: false, error: "grant needs a document and an app container id")
            }
            do {
                let document = try fileSystem.resolve(path: path, in: view)
                let container = try fileSystem.rootIno(of: .app(ContainerID(app)))
                let name = request.target ?? (path as NSString).lastPathComponent
                try fileSystem.addReference(to: document, parent: container, name: name)
                response.message = "\(app) can open \(path) in place as \(name) in its container"
            } catch {
                return ControlResponse(ok: false, error: "\(error)")
            }
        case "containers":
            response.containers = containerSummaries(fileSystem: fileSystem)
        case "retry":
            do {
                let ino = try request.path.map { try fileSystem.resolve(path: $0, in: view) }
                let count = fileSystem.retryFailedUploads(under: ino)
                let shown = request.path.map { $0.isEmpty ? "/" : $0 } ?? "the mount"
                response.message = count == 0
                    ? "nothing failed in \(shown); waiting uploads are retried now"
                    : "retrying \(Wording.count(count, "failed upload")) in \(shown)"
            } catch {
                return ControlResponse(ok: false, error: "\(error)")
            }
        case "status":
            response.summary = fileSystem.status()
            if let path = request.path, !path.isEmpty {
                do {
                    let ino = try fileSystem.resolve(path: path, in: view)
                    guard let node = fileSystem.node(ino) else { throw FolioError.notFound(path) }
                    let progress = (try? fileSystem.extendedAttribute(ino, name: "user.folio.progress"))
                        .map { String(decoding: $0, as: UTF8.self) } ?? ""
                    response.item = ItemStatus(
                        path: path, id: node.itemID.rawValue, container: node.container.rawValue,
                        kind: node.kind.rawValue, state: node.state.name, size: node.size, progress: progress,
                        version: node.remoteVersion, pinned: node.pinned, pendingUpload: node.hasPendingUpload)
                    if case .failed(let reason) = node.state { response.item?.error = reason }
                    response.item?.waiting = fileSystem.uploadWait(of: ino)
                } catch {
                    return ControlResponse(ok: false, error: "\(error)")
                }
            }
        default:
            return ControlResponse(ok: false, error: "unknown command \(request.command)")
        }
        return response
    }
}
