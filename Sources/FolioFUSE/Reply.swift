import CFUSE
import FolioCore
import Logging
import SystemPackage

/// A FUSE request that is answered exactly once, from any thread. A request dropped without an answer is
/// answered with `EIO` and logged, so the calling process never hangs. Answers are typed (``Reply+Answers``):
/// raw errno integers and `fuse_reply_*` calls stay in this adapter.
public final class Reply: @unchecked Sendable {
    /// The raw request, for the answers below and for libfuse calls that need it while it is open
    /// (`fuse_add_direntry`, `fuse_req_interrupt_func`).
    let request: fuse_req_t
    private var answered = false
    private let operation: StaticString
    private let logger: Logger
    /// How long the kernel may keep entries and attributes that are not volatile.
    let cacheTimeout: Double
    /// For a request that changes the tree: the mount whose other views must have dropped what the change made
    /// stale before the answer goes (``KernelNotifier/waitForTheOtherMounts(limit:)``).
    private let changing: KernelNotifier?

    init(
        _ request: fuse_req_t, _ operation: StaticString, logger: Logger, cacheTimeout: Double,
        changing: KernelNotifier? = nil
    ) {
        self.request = request
        self.operation = operation
        self.logger = logger
        self.cacheTimeout = cacheTimeout
        self.changing = changing
    }

    deinit {
        if !answered {
            logger.error("\(operation): request dropped without a reply; answering EIO")
            fuse_reply_err(request, EIO)
        }
    }

    /// Answers with `body`, which calls one `fuse_reply_*` function with the raw request.
    func answer(_ body: (fuse_req_t) -> Void) {
        precondition(!answered, "a FUSE request was answered twice")
        answered = true
        changing?.waitForTheOtherMounts()
        body(request)
    }

    /// Answers with an error, logged unless it is an everyday one (not found, exists, …).
    public func fail(_ anyError: any Error) {
        let error = anyError as? FolioError ?? .io("\(anyError)")
        switch error {
        case .notFound, .exists, .notEmpty, .noAttribute, .range:
            break
        case .notHere:
            logger.debug("\(operation): \(error)")  // an indexer crawling placeholders: one per file
        default:
            logger.notice("\(operation): \(error)")
        }
        refuse(error.errno)
    }

    /// Answers with `errno`, quietly: an answer the request expects, not a failure to log.
    public func refuse(_ errno: Errno) {
        answer { fuse_reply_err($0, errno.rawValue) }
    }

    /// Answers success without data.
    public func succeed() {
        answer { fuse_reply_err($0, 0) }
    }
}
