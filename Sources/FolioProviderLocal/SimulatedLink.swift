import FolioCore
import Synchronization

/// One direction of the simulated network's link (``NetworkSimulation/bandwidthBytesPerSecond``), shared by every
/// transfer that crosses it: concurrent fetches divide the bandwidth between them, as on a real link, instead of
/// each getting all of it. Each chunk takes its turn: it is done when the bytes sent before it and its own could
/// have crossed the link (an idle link starts again from now).
final class SimulatedLink: Sendable {
    private let nextFree = Mutex<ContinuousClock.Instant?>(nil)

    /// Waits until `count` more bytes have crossed the link at `bandwidth` bytes per second (0: at once);
    /// `.interrupted` when the task is cancelled.
    func transfer(_ count: Int64, bandwidth: Int64, what: String) async throws {
        guard bandwidth > 0, count > 0 else { return }
        let duration = Duration.seconds(Double(count) / Double(bandwidth))
        let due = nextFree.withLock { next -> ContinuousClock.Instant in
            let now = ContinuousClock.now
            let start = next.map { max($0, now) } ?? now
            next = start + duration
            return start + duration
        }
        do {
            try await Task.sleep(until: due, clock: .continuous)
        } catch {
            throw FolioError.interrupted("\(what) cancelled")
        }
    }
}
