import FolioCore
import FolioFUSE
import Foundation

/// One more mount of the daemon's state, showing another view: its FUSE session, served on its own thread,
/// and its control socket.
final class AttachedView: @unchecked Sendable {
    let view: NamespaceView
    let mountpoint: String
    let mount: FUSEMount
    let control: ControlServer
    let invalidatorID: Int
    /// Signalled when the view's loop has ended and its session is freed.
    let finished = DispatchSemaphore(value: 0)

    init(view: NamespaceView, mountpoint: String, mount: FUSEMount, control: ControlServer, invalidatorID: Int) {
        self.view = view
        self.mountpoint = mountpoint
        self.mount = mount
        self.control = control
        self.invalidatorID = invalidatorID
    }
}

extension Daemon {
    /// Mounts `view` of this daemon's state at `mountpoint` and serves it until it is unmounted (or the
    /// daemon's own mount ends). Every view shares the items, coordination, uploads and kernel invalidations.
    func attachView(_ view: NamespaceView, at mountpoint: String, fileSystem: FolioFileSystem) throws(FolioError) {
        let mountpoint = RuntimePaths.canonical(mountpoint)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: mountpoint, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .notFound("mountpoint \(mountpoint) is not a folder")
        }
        let ownMountpoint = RuntimePaths.canonical(configuration.mountpoint.string)
        if attachedViews.withLock({ $0[mountpoint] != nil }) || mountpoint == ownMountpoint {
            throw .busy("\(mountpoint) is already a mount of this daemon")
        }
        let mount = FUSEMount(
            fileSystem: fileSystem,
            options: MountOptions(
                mountpoint: mountpoint, source: configuration.remote.string, allowOther: configuration.allowOther,
                debug: configuration.debug, rootIno: try fileSystem.rootIno(of: view)),
            logger: logger)
        try mount.mount()
        let invalidatorID = fileSystem.addInvalidator(mount.invalidator)
        let control = ControlServer(path: RuntimePaths.controlSocket(forMountpoint: mountpoint).string) { [self] request in
            handle(request, fileSystem: fileSystem, view: view, mountpoint: mountpoint)
        }
        do {
            try control.start()
        } catch {
            fileSystem.removeInvalidator(invalidatorID)
            mount.stop()
            mount.unmount()
            throw error
        }
        let attached = AttachedView(
            view: view, mountpoint: mountpoint, mount: mount, control: control, invalidatorID: invalidatorID)
        attachedViews.withLock { $0[mountpoint] = attached }
        let thread = Thread { [self] in
            _ = mount.run(handlingSignals: false)
            logger.info("unmounting the \(view) at \(mountpoint)")
            fileSystem.removeInvalidator(invalidatorID)
            control.stop()
            mount.unmount()
            attachedViews.withLock { _ = $0.removeValue(forKey: mountpoint) }
            attached.finished.signal()
        }
        thread.name = "folio-view"
        thread.start()
        logger.info("mounted the \(view) at \(mountpoint)")
    }

    /// Ends every attached view (the daemon's own mount ended), waiting a bounded time for each.
    func detachAllViews() {
        let views = attachedViews.withLock { Array($0.values) }
        for view in views {
            view.mount.stop()
            if view.finished.wait(timeout: .now() + 10) == .timedOut {
                logger.warning("the \(view.view) at \(view.mountpoint) did not end within 10 s")
            }
        }
    }
}
