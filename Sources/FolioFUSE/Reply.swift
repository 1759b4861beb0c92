import CFUSE
import FolioCore
import Logging

/// A FUSE request that is answered exactly once, from any thread. A request dropped without an answer is
/// answered with `EIO` and logged, so the calling process never hangs.
final class Reply: @unchecked Sendable {
    private let request: fuse_req_t
    private var answered = false
    private let operation: StaticString
    private let logger: Logger
    /// For a request that changes the tree: the mount whose other views must have dropped what the change made
    /// stale before the answer goes (``KernelNotifier/waitForTheOtherMounts(limit:)``).
    private let changing: KernelNotifier?

    init(_ request: fuse_req_t, _ operation: StaticString, logger: Logger, changing: KernelNotifier? = nil) {
        self.request = request
        self.operation = operation
        self.logger = logger
        self.changing = changing
    }

    deinit {
        if !answered {
            logger.error("\(operation): request dropped without a reply; answering EIO")
            fuse_reply_err(request, EIO)
        }
    }

    /// The raw request, for replies that need it (`fuse_reply_*` helpers below).
    func answer(_ body: (fuse_req_t) -> Void) {
        precondition(!answered, "a FUSE request was answered twice")
        answered = true
        changing?.waitForTheOtherMounts()
        body(request)
    }

    /// Answers with an error.
    func fail(_ anyError: any Error) {
        let error = anyError as? FolioError ?? .io("\(anyError)")
        switch error {
        case .notFound, .exists, .notEmpty, .noAttribute, .range:
            break
        case .notHere:
            logger.debug("\(operation): \(error)")  // an indexer crawling placeholders: one per file
        default:
            logger.notice("\(operation): \(error)")
        }
        let code = error.errno.rawValue
        answer { fuse_reply_err($0, code) }
    }

    /// Answers success without data.
    func succeed() {
        answer { fuse_reply_err($0, 0) }
    }
}
