import Synchronization

/// Collects the progress values a provider reports, from any thread, and whether the transfer has ended.
final class ProgressRecorder: Sendable {
    /// The values in the order they were reported, and whether the transfer is over.
    private let state = Mutex<(values: [Int64], finished: Bool)>(([], false))

    /// Records one value.
    func record(_ value: Int64) { state.withLock { $0.values.append(value) } }

    /// Notes that the transfer has ended (successfully or not).
    func markFinished() { state.withLock { $0.finished = true } }

    /// The values reported so far.
    var values: [Int64] { state.withLock { $0.values } }

    /// Waits (polling every 5 ms) until a value above zero was reported or the transfer is over; a safety limit
    /// of `limitSeconds` keeps a broken provider from hanging the suite.
    func waitForProgress(limitSeconds: Double = 60) async {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(limitSeconds)
        while clock.now < deadline {
            let (values, finished) = state.withLock { ($0.values, $0.finished) }
            if finished || values.contains(where: { $0 > 0 }) { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
