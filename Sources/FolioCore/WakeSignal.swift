import Synchronization

/// Wakes one background loop: ``signal()`` from anywhere; ``wait(upTo:)`` returns at once if signalled since
/// the last wait, otherwise at the next signal, after the time-out, or when the waiting task is cancelled.
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// A signal nobody has given yet.
    public init() {}

    /// Wakes the waiter (or the next wait).
    public func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.pending = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits for a signal, at most `timeout`; consumes it.
    public func wait(upTo timeout: Duration) async {
        let timer = Task {
            // Cancelled when the wait ends otherwise: then it must not signal (that would wake the next wait).
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.signal()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.signal()
        }
        state.withLock { $0.pending = false }
    }
}
