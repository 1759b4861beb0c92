import Foundation
import Synchronization
import XCTest

extension XCTestCase {
    /// Runs `body` on a thread of its own and waits for it at most `seconds`; false if it did not finish (an
    /// error it throws fails the test).
    func finishes(within seconds: Double, _ body: @escaping @Sendable () throws -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        Thread {
            do { try body() } catch { failure.withLock { $0 = "\(error)" } }
            done.signal()
        }.start()
        let finished = done.wait(timeout: .now() + seconds) == .success
        if let message = failure.withLock({ $0 }) { XCTFail(message) }
        return finished
    }
}
