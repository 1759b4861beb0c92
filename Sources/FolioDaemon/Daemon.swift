import Dispatch
import FolioCore
import FolioFUSE
import FolioProviderLocal
import FolioStore
import FolioSync
import Foundation
import Logging

/// The composition root: builds the object graph from a configuration, mounts, runs the services (uploader,
/// poller, control socket) and tears everything down when the mount ends.
public final class Daemon: @unchecked Sendable {
    private let configuration: DaemonConfiguration
    private let logger: Logger

    /// Creates a daemon.
    public init(configuration: DaemonConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Mounts and serves until unmounted. `ready` is called once the mount is up (or with the error that
    /// stopped it from coming up). Must be called from a thread that is not running Swift concurrency.
    public func run(ready: (Result<Void, FolioError>) -> Void) -> Int32 {
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
        services.poller.cancel()
        services.uploader.stop()
        services.control.stop()
        services.mount.unmount()
        services.fileSystem.flushDeferredWrites()
        services.lock.release()
        return status
    }

    private struct Services {
        var fileSystem: FolioFileSystem
        var mount: FUSEMount
        var uploader: Uploader
        var poller: Task<Void, Never>
        var control: ControlServer
        var lock: StateLock
    }

    private func start() throws(FolioError) -> Services {
        let stateDirectory = configuration.stateDirectory
        do {
            try FileManager.default.createDirectory(
                atPath: stateDirectory.string, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io("cannot create state folder \(stateDirectory): \(error)")
        }
        let lock = try StateLock.acquire(in: stateDirectory)
        do {
            return try start(lock: lock)
        } catch {
            lock.release()
            throw error
        }
    }

    private func start(lock: StateLock) throws(FolioError) -> Services {
        let provider: LocalProvider
        do {
            if !LocalProvider.isRemote(at: configuration.remote) {
                try LocalProvider.initialize(at: configuration.remote)
            }
            provider = try LocalProvider(root: configuration.remote, simulation: configuration.simulation)
        } catch {
            throw error as? FolioError ?? .io("cannot open remote \(configuration.remote): \(error)")
        }
        let store = try SQLiteMetadataStore(path: configuration.stateDirectory.appending("metadata.sqlite").string)
        let cache = try ContentCache(directory: configuration.stateDirectory.appending("content"))
        let fileSystem = try FolioFileSystem(
            store: store, cache: cache,
            configuration: FileSystemConfiguration(
                writeWaitTimeout: configuration.writeWaitTimeout, defaultUID: getuid(), defaultGID: getgid(),
                groupWriteDelay: configuration.groupWriteDelay),
            logger: logger)
        let poller = RemotePoller(
            fileSystem: fileSystem, provider: provider, logger: logger, interval: configuration.pollInterval)
        blockOn { await poller.refresh() }

        let mount = FUSEMount(
            fileSystem: fileSystem,
            options: MountOptions(
                mountpoint: configuration.mountpoint.string, source: configuration.remote.string,
                allowOther: configuration.allowOther, debug: configuration.debug),
            logger: logger)
        let materializer = Materializer(fileSystem: fileSystem, provider: provider, logger: logger)
        let uploader = Uploader(
            fileSystem: fileSystem, provider: provider, logger: logger, quietPeriod: configuration.uploadQuietPeriod)
        fileSystem.connect(materializer: materializer, uploader: uploader, invalidator: mount.invalidator)
        try mount.mount()

        let canonicalMountpoint = RuntimePaths.canonical(configuration.mountpoint.string)
        let configuration = self.configuration
        let control = ControlServer(
            path: RuntimePaths.controlSocket(forMountpoint: canonicalMountpoint).string
        ) { request in
            Self.handle(request, fileSystem: fileSystem, configuration: configuration, mountpoint: canonicalMountpoint)
        }
        do {
            try control.start()
        } catch {
            mount.unmount()
            throw error
        }
        uploader.start()
        let pollTask = Task { await poller.run() }
        return Services(fileSystem: fileSystem, mount: mount, uploader: uploader, poller: pollTask, control: control, lock: lock)
    }

    private func blockOn(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }

    static func handle(
        _ request: ControlRequest, fileSystem: FolioFileSystem, configuration: DaemonConfiguration, mountpoint: String
    ) -> ControlResponse {
        var response = ControlResponse(ok: true)
        response.pid = getpid()
        response.mountpoint = mountpoint
        response.remote = configuration.remote.string
        response.stateDirectory = configuration.stateDirectory.string
        switch request.command {
        case "status":
            response.summary = fileSystem.status()
            if let path = request.path, !path.isEmpty {
                do {
                    let ino = try fileSystem.resolve(path: path)
                    guard let node = fileSystem.node(ino) else { throw FolioError.notFound(path) }
                    let progress = (try? fileSystem.extendedAttribute(ino, name: "user.folio.progress"))
                        .map { String(decoding: $0, as: UTF8.self) } ?? ""
                    response.item = ItemStatus(
                        path: path, id: node.itemID.rawValue, container: node.container.rawValue,
                        kind: node.kind.rawValue, state: node.state.name, size: node.size, progress: progress,
                        version: node.remoteVersion, pinned: node.pinned, pendingUpload: node.hasPendingUpload)
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
