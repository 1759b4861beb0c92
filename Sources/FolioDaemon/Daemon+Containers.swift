import FolioCore
import FolioSync
import Foundation

/// What the control requests about containers reach beyond the filesystem: the provider and the poller.
struct DaemonLinks: Sendable {
    var provider: any Provider
    var poller: RemotePoller
}

extension Daemon {
    /// Makes the app container `container` on the remote if this state does not know it (an app's first mount),
    /// and registers it: every device lists it from then on.
    func ensureContainer(_ container: Container, fileSystem: FolioFileSystem) throws(FolioError) {
        guard !fileSystem.knowsContainer(container.id) else { return }
        _ = try ContainerID.forNewContainer(container.id.rawValue)
        guard let links = links.withLock({ $0 }) else { throw .notSupported("the daemon is not running yet") }
        let made = blockOn { () async -> Result<Container, FolioError> in
            do {
                let made = try await links.provider.createContainer(container)
                // Read back (a refresh that fails for a moment, or meets another's at the same time, is tried
                // again, a bounded number of times).
                for _ in 0..<Self.readBackAttempts {
                    await links.poller.refresh()
                    if fileSystem.knowsContainer(made.id) { break }
                    try? await Task.sleep(for: .milliseconds(250))
                }
                return .success(made)
            } catch {
                return .failure(FolioError(error))
            }
        }
        let created = try made.get()
        guard fileSystem.knowsContainer(created.id) else {
            let reason = fileSystem.status().lastProviderError.map { ": \($0)" } ?? ""
            throw .offline("the container \(created.id) was made on the remote, but the remote could not be read "
                + "back\(reason); mount the view again in a moment")
        }
        let visibility = created.isPublic ? "public" : "private"
        logger.notice("made the container \(created.id) (\(visibility), \"\(created.displayName)\") on the remote")
    }

    /// How many times a container just made is looked for on the remote.
    static let readBackAttempts = 20

    /// The remote's containers with what this state knows of each (`folio containers`); when the remote cannot be
    /// asked, the containers this state knows.
    func containerSummaries(fileSystem: FolioFileSystem) -> [ContainerSummary] {
        let statistics = fileSystem.containerStatistics()
        var containers: [Container] = []
        if let links = links.withLock({ $0 }) {
            containers = blockOn { (try? await links.provider.listContainers()) ?? [] }
        }
        let listed = Set(containers.map(\.id))
        for id in statistics.keys.sorted() where !listed.contains(id) {
            containers.append(Container(id: id, displayName: id.rawValue, isPublic: false))
        }
        // The Drive first, then by id.
        let ordered = containers.sorted { ($0.id == .drive ? "" : $0.id.rawValue) < ($1.id == .drive ? "" : $1.id.rawValue) }
        return ordered.map { container in
            let counted = statistics[container.id] ?? ContainerStatistics()
            return ContainerSummary(
                id: container.id.rawValue, displayName: container.displayName, isPublic: container.isPublic,
                items: counted.items, size: counted.bytes, localSize: counted.localBytes,
                foldersNotListed: counted.foldersNotListed)
        }
    }
}
