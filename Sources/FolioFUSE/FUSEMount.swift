import CFUSE
import FolioCore
import Foundation
import Logging
import Synchronization

/// Options of a FUSE mount.
public struct MountOptions: Sendable {
    /// Where to mount.
    public var mountpoint: String
    /// The source shown in the mount table (`fsname`).
    public var source: String
    /// Let other users use the mount (`allow_other`); with `default_permissions` the kernel checks modes.
    public var allowOther: Bool
    /// How long the kernel may cache entries and attributes (explicit invalidation keeps them fresh).
    public var cacheTimeout: Double
    /// Worker threads.
    public var maxThreads: Int
    /// Log every request (libfuse debug output).
    public var debug: Bool
    /// Readahead of the mount in KiB (set where permitted; 0 keeps the kernel's default).
    public var readaheadKiB: Int
    /// The core's inode shown as the mount's root: the root of the mounted view (see
    /// ``FolioFileSystem/rootIno(of:)``).
    public var rootIno: UInt64
    /// The command that starts the replay helper (`folio replay-helper`, which adds the mountpoint and device):
    /// remote changes are replayed through the mount so its inotify watchers see them (see ``ReplayedChange``).
    /// `nil`: not replayed.
    public var replayHelper: [String]?

    /// Creates options.
    public init(
        mountpoint: String, source: String, allowOther: Bool = false, cacheTimeout: Double = 3600,
        maxThreads: Int = 16, debug: Bool = false, readaheadKiB: Int = 8192, rootIno: UInt64 = FolioFileSystem.rootIno,
        replayHelper: [String]? = nil
    ) {
        self.rootIno = rootIno
        self.replayHelper = replayHelper
        self.readaheadKiB = readaheadKiB
        self.mountpoint = mountpoint
        self.source = source
        self.allowOther = allowOther
        self.cacheTimeout = cacheTimeout
        self.maxThreads = maxThreads
        self.debug = debug
    }
}

/// A mounted Folio filesystem: the libfuse session and the thin adapter from FUSE requests to the core.
public final class FUSEMount: @unchecked Sendable {
    let fileSystem: FolioFileSystem
    let logger: Logger
    let options: MountOptions
    let notifier: KernelNotifier
    let interrupts = Mutex(InterruptRegistry())
    private var session: OpaquePointer?
    /// Serializes ``stop()`` and ``unmount()`` (libfuse's unmount is not safe to run twice at once).
    private let sessionLock = NSLock()

    /// Creates a mount of `fileSystem` (not mounted yet).
    public init(fileSystem: FolioFileSystem, options: MountOptions, logger: Logger) {
        self.fileSystem = fileSystem
        self.options = options
        self.logger = logger
        notifier = KernelNotifier(
            rootIno: options.rootIno,
            replayer: options.replayHelper.map {
                ChangeReplayer(
                    fileSystem: fileSystem, mountpoint: options.mountpoint, rootIno: options.rootIno, helperCommand: $0,
                    othersMayUse: options.allowOther, logger: logger)
            })
    }

    /// The invalidator the core should use.
    public var invalidator: any KernelCacheInvalidator { notifier }

    /// Mounts. After this returns the mountpoint is a FUSE mount; requests are served once ``run()`` runs.
    public func mount() throws(FolioError) {
        var mountOptions = "fsname=folio:\(options.source.replacingOccurrences(of: ",", with: "_")),subtype=folio"
        mountOptions += ",default_permissions"
        if options.allowOther { mountOptions += ",allow_other" }
        var arguments = ["folio", "-o", mountOptions]
        if options.debug { arguments.append("-d") }
        var cStrings = arguments.map { strdup($0) }
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
            throw .io("cannot mount at \(options.mountpoint) (is /dev/fuse usable, and the mountpoint an empty folder?)")
        }
        self.session = session
        notifier.attach(session)
        if let device = mountDevice() {
            notifier.replayer?.attach(device: device)
            widenReadahead(device)
        }
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

    static func from(_ request: fuse_req_t?) -> FUSEMount {
        Unmanaged<FUSEMount>.fromOpaque(fuse_req_userdata(request)!).takeUnretainedValue()
    }

    /// The core's inode for a kernel node id: the kernel calls the mount's root 1 (`FUSE_ROOT_ID`) whatever the
    /// view; every other node id is the core's inode itself. The full view's root, the only other inode the
    /// swap could touch, is never reachable from an app view, so the mapping is one to one.
    func coreIno(_ ino: fuse_ino_t) -> UInt64 {
        ino == FUSE_ROOT_ID ? options.rootIno : ino
    }

    /// The replay script in force for `request`, if the mount's replay helper sent it (see
    /// ``ChangeReplayer``).
    func replayScript(_ request: fuse_req_t) -> ReplayScript? {
        guard let replayer = notifier.replayer else { return nil }
        return replayer.script(forProcess: fuse_req_ctx(request)!.pointee.pid)
    }

    func context(_ request: fuse_req_t) -> RequestContext {
        let ctx = fuse_req_ctx(request)!.pointee
        return RequestContext(uid: ctx.uid, gid: ctx.gid, processID: fileSystem.processID(ofThread: ctx.pid))
    }

    /// How long the kernel may keep `attributes`.
    func attributeTimeout(_ attributes: Attributes) -> Double {
        attributes.isVolatile ? 0 : options.cacheTimeout
    }

    func entry(_ attributes: Attributes) -> fuse_entry_param {
        var entry = fuse_entry_param()
        entry.ino = attributes.ino
        entry.generation = 1
        entry.attr = attributes.statValue
        entry.attr_timeout = attributes.isVolatile ? 0 : options.cacheTimeout
        entry.entry_timeout = attributes.isVolatileEntry ? 0 : options.cacheTimeout
        return entry
    }
}
