import FolioCore

extension LocalProvider {
    /// Creates the container's folder and its manifest entry under the remote's lock; an existing entry is kept.
    public func createContainer(_ container: Container) async throws -> Container {
        try await recognizing("create container \(container.id)") {
            _ = try await admit("create container \(container.id)", writes: true)
            try Self.addContainer(container, at: root, keepingExisting: true)
            return try Self.containers(of: layout).first { $0.id == container.id } ?? container
        }
    }
}
