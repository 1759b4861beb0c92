import FolioCore
import Foundation
import SystemPackage

extension NetworkSimulation {
    /// The run-time override file of the remote at `root`: `root/.folio/simulate.json`.
    public static func overrideFile(ofRemoteAt root: FilePath) -> FilePath {
        RemoteLayout(root: root).simulationOverride
    }

    /// Makes this simulation the run-time override of the remote at `root` (providers running on it pick it up
    /// at their next call). The file is replaced atomically.
    public func write(toRemoteAt root: FilePath) throws {
        let layout = RemoteLayout(root: root)
        try SystemCalls.makeDirectories(layout.stateDirectory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(try encoder.encode(self), to: layout.simulationOverride)
    }

    /// Removes the run-time override of the remote at `root`, so providers return to the simulation they were
    /// created with. No override is fine.
    public static func removeOverride(ofRemoteAt root: FilePath) throws {
        let path = overrideFile(ofRemoteAt: root)
        guard try SystemCalls.statusIfPresent(path) != nil else { return }
        try SystemCalls.removeFile(path)
    }
}
