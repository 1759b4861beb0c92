import FolioCore

extension LocalProvider {
    /// Lets a provider call through once the remote folder is recognized (``RemoteIdentity``: `.offline`
    /// otherwise) and the network simulation admits it; returns the simulation in force.
    func admit(_ operation: String, writes: Bool = false) async throws -> NetworkSimulation {
        try identity.check(operation)
        return try await gate.admit(operation, writes: writes)
    }

    /// Runs `body` on the tree under its locks (``SharedRemoteTree/withLock(_:)``), once the remote folder is
    /// recognized inside them: a folder replaced after ``admit(_:writes:)`` but before the check-then-act is then
    /// `.offline`, and nothing of this remote is written into another. Never `await` inside.
    func withTree<Result: Sendable>(_ operation: String, _ body: (inout RemoteTree) throws -> Result) throws -> Result {
        try tree.withLock { tree in
            try identity.check(operation)
            return try body(&tree)
        }
    }

    /// Runs the body of a provider call: if it fails because the remote folder went away or was replaced
    /// meanwhile, it fails with `.offline` (a folder that vanished is no deletion, a path that cannot be found
    /// is no missing item).
    func recognizing<Value>(_ operation: String, _ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch {
            throw identity.explain(error, operation)
        }
    }

    /// The outcomes of several creates, with those that failed because the remote folder went away or was
    /// replaced meanwhile failing with `.offline`.
    func recognizing(
        _ outcomes: [Result<RemoteItem, FolioError>], _ operation: String
    ) -> [Result<RemoteItem, FolioError>] {
        let failed = outcomes.contains {
            if case .failure = $0 { return true }
            return false
        }
        guard failed, let offline = identity.recheck(operation) else { return outcomes }
        return outcomes.map { outcome in
            guard case .failure = outcome else { return outcome }
            return .failure(offline)
        }
    }
}
