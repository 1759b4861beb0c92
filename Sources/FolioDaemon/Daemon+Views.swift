import FolioCore
import FolioFUSE
import Foundation

/// One more mount of the daemon's state, showing another view: its FUSE session, served on its own thread,
/// and its control socket.
final class AttachedView: @unchecked Sendable {
    let view: NamespaceView
    let mountpoint: String
    let mount: FUSEMount
    /// Signalled when the view's loop has ended and its session is freed.
    let finished = DispatchSemaphore(value: 0)

    init(view: NamespaceView, mountpoint: String, mount: FUSEMount) {
        self.view = view
        self.mountpoint = mountpoint
        self.mount = mount
    }
}

/// The attached views of a daemon, and the mountpoints being attached right now.
struct AttachedViews: Sendable {
    var views: [String: AttachedView] = [:]
    /// Mountpoints an attach is working on (taken before mounting, so two attaches cannot both mount).
    var reserved: Set<String> = []
    /// The daemon's own mount ended: no more attaches.
    var closing = false
}

extension Daemon {
    /// Mounts `view` of this daemon's state at `mountpoint` and serves it until it is unmounted (or the
    /// daemon's own mount ends). Every view shares the items, coordination, uploads and kernel invalidations.
    func attachView(_ view: NamespaceView, at mountpoint: String, fileSystem: FolioFileSystem) throws(FolioError) {
        let mountpoint = RuntimePaths.canonical(mountpoint)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: mountpoint, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw .notFound("mountpoint \(mountpoint) is not a folder")
        }
        let ownMountpoint = RuntimePaths.canonical(configuration.mountpoint.string)
        try attachedViews.withLock { registry throws(FolioError) in
            if registry.closing { throw .busy("the daemon is unmounting") }
            if registry.views[mountpoint] != nil || registry.reserved.contains(mountpoint)
                || mountpoint == ownMountpoint {
                throw .busy("\(mountpoint) is already a mount of this daemon")
            }
            registry.reserved.insert(mountpoint)
        }
        defer { attachedViews.withLock { _ = $0.reserved.remove(mountpoint) } }
        let rootIno = try fileSystem.rootIno(of: view)
        let mount = FUSEMount(
            fileSystem: fileSystem,
            options: MountOptions(
                mountpoint: mountpoint, source: configuration.remote.description, allowOther: configuration.allowOther,
                debug: configuration.debug, rootIno: rootIno),
            logger: logger, front: replayer(of: fileSystem, at: mountpoint, rootIno: rootIno))
        try mount.mount()
        let invalidatorID = fileSystem.addInvalidator(mount.invalidator)
        let control = ControlServer(path: RuntimePaths.controlSocket(forMountpoint: mountpoint).string) {
            [self] request in
            handle(request, fileSystem: fileSystem, describer: nil, view: view, mountpoint: mountpoint)
        }
        let attached = AttachedView(view: view, mountpoint: mountpoint, mount: mount)
        do {
            try control.start()
            try attachedViews.withLock { registry throws(FolioError) in
                if registry.closing { throw .busy("the daemon is unmounting") }
                registry.views[mountpoint] = attached
            }
        } catch {
            control.stop()
            fileSystem.removeInvalidator(invalidatorID)
            mount.stop()
            mount.unmount()
            throw error
        }
        let thread = Thread { [self] in
            _ = mount.run(handlingSignals: false)
            logger.info("unmounting the \(view) at \(mountpoint)")
            control.stop()
            fileSystem.removeInvalidator(invalidatorID)
            mount.unmount()
            attachedViews.withLock { _ = $0.views.removeValue(forKey: mountpoint) }
            attached.finished.signal()
        }
        thread.name = "folio-view"
        thread.start()
        logger.info("mounted the \(view) at \(mountpoint)")
    }

    /// Ends every attached view (the daemon's own mount ended), waiting a bounded time for each; no view can
    /// be attached afterwards.
    func detachAllViews() {
        let views = attachedViews.withLock { registry in
            registry.closing = true
            return Array(registry.views.values)
        }
        for view in views {
            view.mount.stop()
            if view.finished.wait(timeout: .now() + 10) == .timedOut {
                logger.warning("the \(view.view) at \(view.mountpoint) did not end within 10 s (still in use?)")
            }
        }
    }
}
