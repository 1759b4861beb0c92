import CFUSE
import Dispatch
import FolioCore

extension FUSEHandlers {
    /// Runs `body` in a task that is cancelled when the kernel interrupts the request (Ctrl-C on the caller).
    /// `body` must send its reply through the `finish` closure it receives, which keeps the reply from racing
    /// with the registration of the interrupt callback.
    func interruptible(_ reply: Reply, _ body: @escaping @Sendable (_ finish: (() -> Void) -> Void) async -> Void) {
        let id = interrupts.withLock { state -> UInt in
            state.next += 1
            return state.next
        }
        let requestBox = RequestBox(reply.request)
        interrupts.withLock { state in
            let task = Task {
                await body { answer in
                    // Deregister first (under the lock that registration holds), then reply.
                    _ = self.interrupts.withLock { $0.tasks.removeValue(forKey: id) }
                    answer()
                }
            }
            state.tasks[id] = task
            // libfuse may call the callback right here (request already interrupted), under its own lock: the
            // callback only schedules the cancellation, it never takes our lock synchronously.
            fuse_req_interrupt_func(requestBox.request, { request, data in
                let id = UInt(bitPattern: data)
                guard let request, let userdata = fuse_req_userdata(request) else { return }
                let mount = Unmanaged<FUSEMount>.fromOpaque(userdata).takeUnretainedValue()
                DispatchQueue.global().async { mount.handlers.cancelInterrupted(id) }
            }, UnsafeMutableRawPointer(bitPattern: id))
        }
    }

    /// Cancels the task of the interrupted request `id`, if it still runs.
    func cancelInterrupted(_ id: UInt) {
        let task = interrupts.withLock { $0.tasks[id] }
        if task != nil { logger.info("request \(id) interrupted: cancelling it") }
        task?.cancel()
    }
}

/// A request pointer that may cross into a task (libfuse allows replying from any thread).
struct RequestBox: @unchecked Sendable {
    let request: fuse_req_t
    init(_ request: fuse_req_t) { self.request = request }
}

/// Tasks of requests that can be interrupted, by id.
struct InterruptRegistry: Sendable {
    var next: UInt = 0
    var tasks: [UInt: Task<Void, Never>] = [:]
}
