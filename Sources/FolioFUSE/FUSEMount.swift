import CFUSE
import FolioCore
import Foundation
import Logging

/// A mounted Folio filesystem: the libfuse session, and the thin adapter from FUSE requests to the core — each
/// request's arguments copied and checked into a ``FUSERequest``, shown to the mount's ``FUSEFront`` if it has one,
/// then served by its handler (``FUSEHandlers``).
public final class FUSEMount: @unchecked Sendable {
    let logger: Logger
    let options: MountOptions
    let notifier: KernelNotifier
    let handlers: FUSEHandlers
    /// What answers requests before the handlers do (the inotify replay), if anything.
    let front: (any FUSEFront)?
    private let arguments: CArguments
    private var session: OpaquePointer?
    /// Serializes ``stop()`` and ``unmount()`` (libfuse's unmount is not safe to run twice at once).
    private let sessionLock = NSLock()

    /// Creates a mount of `fileSystem` (not mounted yet), with `front` in front of its handlers.
    public init(fileSystem: FolioFileSystem, options: MountOptions, logger: Logger, front: (any FUSEFront)? = nil) {
        self.options = options
        self.logger = logger
        self.front = front
        handlers = FUSEHandlers(fileSystem: fileSystem, logger: logger)
        notifier = KernelNotifier(rootIno: options.rootIno, front: front)
        arguments = CArguments(rootIno: options.rootIno)
    }

    /// The invalidator the core should use.
    public var invalidator: any KernelCacheInvalidator { notifier }

    /// Mounts. After this returns the mountpoint is a FUSE mount; requests are served once ``run()`` runs.
    public func mount() throws(FolioError) {
        var mountOptions = "fsname=folio:\(options.source.replacingOccurrences(of: ",", with: "_")),subtype=folio"
        mountOptions += ",default_permissions"
        if options.allowOther { mountOptions += ",allow_other" }
        var commandLine = ["folio", "-o", mountOptions]
        if options.debug { commandLine.append("-d") }
        var cStrings = commandLine.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var args = cStrings.withUnsafeMutableBufferPointer { buffer in
            cfuse_args_init(Int32(buffer.count), buffer.baseAddress)
        }
        var operations = FUSEOperations.table()
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        guard let session = fuse_session_new(&args, &operations, MemoryLayout<fuse_lowlevel_ops>.size, userdata) else {
            fuse_opt_free_args(&args)
            throw .io("fuse_session_new failed")
        }
        fuse_opt_free_args(&args)
        guard fuse_session_mount(session, options.mountpoint) == 0 else {
            fuse_session_destroy(session)
            throw .io(
                "cannot mount at \(options.mountpoint) (is /dev/fuse usable, and the mountpoint an empty folder?)")
        }
        self.session = session
        notifier.attach(session)
        let device = mountDevice()
        if let device { widenReadahead(device) }
        notifier.mounted(device: device)
    }

    /// The mount's device (`major:minor`), from `/proc/self/mountinfo`, not by `stat` of the mountpoint, which
    /// would ask this very daemon before it serves requests.
    private func mountDevice() -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        let mountpoint = options.mountpoint.replacingOccurrences(of: " ", with: "\\040")
        var device: String?
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[4] == mountpoint, line.contains(" - fuse.folio ") else { continue }
            device = String(fields[2])  // the last one: mounted over any earlier one
        }
        return device
    }

    /// The kernel reads ahead on a FUSE mount only as far as its backing device's default allows (128 KiB),
    /// which leaves one small read in flight at a time during a sequential scan. Where the daemon may (root),
    /// the mount's readahead is raised to ``MountOptions/readaheadKiB``, so large files stream with several
    /// 1 MiB reads in flight, as on a local disk.
    private func widenReadahead(_ device: String) {
        guard options.readaheadKiB > 0 else { return }
        let setting = "/sys/class/bdi/\(device)/read_ahead_kb"
        do {
            try "\(options.readaheadKiB)\n".write(toFile: setting, atomically: false, encoding: .utf8)
        } catch {
            logger.debug("readahead of the mount left at the kernel's default (\(setting): \(error))")
        }
    }

    /// Serves requests until the filesystem is unmounted, ``stop()`` is called, or — with `handlingSignals`,
    /// for the one mount of a process that owns the signals — SIGINT, SIGTERM or SIGHUP arrives.
    public func run(handlingSignals: Bool = true) -> Int32 {
        guard let session else { return 1 }
        guard handlingSignals else {
            let config = fuse_loop_cfg_create()
            fuse_loop_cfg_set_max_threads(config, UInt32(options.maxThreads))
            fuse_loop_cfg_set_idle_threads(config, UInt32(max(2, options.maxThreads / 2)))
            defer { fuse_loop_cfg_destroy(config) }
            let result = fuse_session_loop_mt(session, config)
            notifier.close()  // nobody serves the mount any more: no replay may wait for it
            return result
        }
        _ = fuse_set_signal_handlers(session)
        let config = fuse_loop_cfg_create()
        fuse_loop_cfg_set_max_threads(config, UInt32(options.maxThreads))
        fuse_loop_cfg_set_idle_threads(config, UInt32(max(2, options.maxThreads / 2)))
        let result = fuse_session_loop_mt(session, config)
        notifier.close()
        fuse_loop_cfg_destroy(config)
        fuse_remove_signal_handlers(session)
        signal(SIGPIPE, SIG_IGN)  // libfuse put back the default, which a write to a gone helper would die of
        return result
    }

    /// Asks the loop to end (from any thread).
    public func requestExit() {
        if let session { fuse_session_exit(session) }
    }

    /// Ends a loop running on another thread: marks the session as exiting and detaches the mountpoint
    /// lazily, which makes the kernel end the connection once nothing uses the mount, so
    /// ``run(handlingSignals:)`` returns. The session and its device descriptor are left alone (replies may
    /// still be sent on them) for ``unmount()``, on the loop's thread, to free.
    public func stop() {
        sessionLock.lock()
        defer { sessionLock.unlock() }
        guard let session else { return }
        notifier.close()
        fuse_session_exit(session)
        if geteuid() == 0 {
            _ = umount2(options.mountpoint, Int32(MNT_DETACH))
        } else {
            let tool = FileManager.default.isExecutableFile(atPath: "/usr/bin/fusermount3")
                ? "/usr/bin/fusermount3" : "/bin/fusermount3"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = ["-u", "-z", options.mountpoint]
            try? process.run()
            process.waitUntilExit()
        }
    }

    /// Unmounts and frees the session (after ``run(handlingSignals:)`` returned).
    public func unmount() {
        sessionLock.lock()
        defer { sessionLock.unlock() }
        guard let session else { return }
        notifier.detach()
        fuse_session_unmount(session)
        fuse_session_destroy(session)
        self.session = nil
    }

    /// Serves one request: copies and checks its C arguments (`convert`; arguments that do not check are answered
    /// with their error), lets the front answer it, or hands it to its handler.
    func serve(
        _ request: fuse_req_t, _ operation: StaticString, _ convert: (CArguments) throws -> FUSERequest
    ) {
        let typed: FUSERequest
        do {
            typed = try convert(arguments)
        } catch {
            Reply(request, operation, logger: logger, cacheTimeout: options.cacheTimeout).fail(error)
            return
        }
        let reply = Reply(
            request, operation, logger: logger, cacheTimeout: options.cacheTimeout,
            changing: typed.changesTree ? notifier : nil)
        let caller = FUSECaller(request)
        if let front, front.answer(typed, from: caller, reply: reply) { return }
        handlers.handle(typed, from: caller, reply)
    }
}
