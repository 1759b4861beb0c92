import Foundation
import Synchronization

/// Holds the first call of a test hook after ``arm()`` until ``open()``: the request that makes it is held at a
/// chosen point (a write before its `pwrite`, a durable store transaction) while others run.
final class Valve: Sendable {
    private let armed = Mutex(false)
    /// Signalled when a call is held.
    let entered = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)

    /// The next ``hold()`` waits.
    func arm() { armed.withLock { $0 = true } }

    /// The hook: the first call after ``arm()`` waits here until ``open()``; the others pass.
    func hold() {
        let holds = armed.withLock { armed -> Bool in
            defer { armed = false }
            return armed
        }
        guard holds else { return }
        entered.signal()
        release.wait()
    }

    /// Lets the held call go on.
    func open() { release.signal() }
}
