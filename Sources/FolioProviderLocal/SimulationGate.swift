import FolioCore
import Foundation
import Synchronization
import SystemPackage

/// Applies the ``NetworkSimulation`` at the start of every provider call: offline, latency, random failures.
/// It re-reads the override file when its status (inode, size, times) changes.
final class SimulationGate: Sendable {
    /// What the gate knows between calls.
    private struct State {
        /// The override file's status when it was last read; `nil` if it was absent.
        var overrideStatus: FileStatus?
        /// The simulation in force.
        var current: NetworkSimulation
        /// The draws behind the error rate.
        var random: SplitMix64
    }

    /// The simulation given at initialization, in force while there is no override file.
    private let configured: NetworkSimulation
    /// The override file.
    private let overrideFile: FilePath
    /// The gate's state.
    private let state: Mutex<State>

    /// A gate for `configured`, overridable by `overrideFile`.
    init(configured: NetworkSimulation, overrideFile: FilePath) {
        self.configured = configured
        self.overrideFile = overrideFile
        state = Mutex(State(overrideStatus: nil, current: configured, random: SplitMix64(seed: configured.seed)))
    }

    /// Lets a call through, or fails it as the simulation says; returns the simulation in force (for pacing
    /// transfers). `operation` names the call in errors; `writes` marks a create or modify.
    func admit(_ operation: String, writes: Bool = false) async throws -> NetworkSimulation {
        if Task.isCancelled { throw FolioError.interrupted(operation) }
        let simulation = refresh()
        if simulation.offline { throw FolioError.offline("\(operation): the simulated network is offline") }
        if simulation.latencyMilliseconds > 0 {
            do {
                try await Task.sleep(for: .milliseconds(simulation.latencyMilliseconds))
            } catch {
                throw FolioError.interrupted(operation)
            }
        }
        if simulation.errorRate > 0 {
            let fails = state.withLock { Double.random(in: 0..<1, using: &$0.random) < simulation.errorRate }
            if fails {
                throw FolioError.providerFailure("\(operation): simulated network failure", retryable: true)
            }
        }
        if writes && simulation.rejectWrites {
            throw FolioError.providerFailure(
                "\(operation): the provider refuses the upload (simulated)", retryable: false)
        }
        return simulation
    }

    /// Called after a call changed the remote: loses its reply as the simulation's
    /// ``NetworkSimulation/lostReplyRate`` says (the change stays done).
    func reply(_ operation: String) throws {
        let simulation = refresh()
        guard simulation.lostReplyRate > 0 else { return }
        let lost = state.withLock { Double.random(in: 0..<1, using: &$0.random) < simulation.lostReplyRate }
        if lost { throw FolioError.providerFailure("\(operation): reply lost (simulated)", retryable: true) }
    }

    /// The simulation in force, after re-reading the override file if it changed. A file that cannot be decoded
    /// (being written by hand, say) leaves the simulation as it was and is read again at the next call.
    private func refresh() -> NetworkSimulation {
        let status = (try? SystemCalls.statusIfPresent(overrideFile)) ?? nil
        return state.withLock { state in
            if status == state.overrideStatus { return state.current }
            let next: NetworkSimulation
            if status != nil {
                guard let data = FileManager.default.contents(atPath: overrideFile.string),
                    let decoded = try? JSONDecoder().decode(NetworkSimulation.self, from: data)
                else { return state.current }
                next = decoded
            } else {
                next = configured
            }
            state.overrideStatus = status
            if next != state.current { state.random = SplitMix64(seed: next.seed) }
            state.current = next
            return next
        }
    }
}
