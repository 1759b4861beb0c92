import FolioCore
import Glibc
import SystemPackage

/// One conditional operation a rival process runs against its own provider, at an agreed instant, so that it
/// races with the same kind of operation made by the conformance suite in its own process (see
/// ``ProviderRival``).
public struct RivalCommand: Codable, Sendable, Equatable {
    /// The operations raced.
    public enum Operation: String, Codable, Sendable {
        /// `modifyItem` with new content at `baseVersion`.
        case modify
        /// `deleteItem` at `baseVersion`.
        case delete
        /// `createItem` of a file named `name` in `parentID`, with id `id`.
        case create
        /// `modifyItem` renaming the item to `name` (metadata only).
        case rename
    }

    /// What to do.
    public var operation: Operation
    /// The container.
    public var container: String
    /// The item (for a create: the new item's id).
    public var id: String
    /// The folder of a create.
    public var parentID: String?
    /// The name of a create or rename.
    public var name: String?
    /// The version a modify or delete is based on.
    public var baseVersion: String?
    /// A local file with the content of a modify or create.
    public var contents: String?
    /// When to start, in `CLOCK_MONOTONIC` nanoseconds (the same clock in every process of the machine).
    public var startAt: UInt64

    /// A command.
    public init(
        operation: Operation, container: ContainerID, id: ItemID, parentID: ItemID? = nil, name: String? = nil,
        baseVersion: String? = nil, contents: String? = nil, startAt: UInt64
    ) {
        self.operation = operation
        self.container = container.rawValue
        self.id = id.rawValue
        self.parentID = parentID?.rawValue
        self.name = name
        self.baseVersion = baseVersion
        self.contents = contents
        self.startAt = startAt
    }

    /// Runs the command on `provider` (waiting for its start instant first).
    public func run(on provider: any Provider) async -> RivalAnswer {
        Self.wait(until: startAt)
        let started = Self.now()
        var answer = await perform(on: provider)
        answer.startedAt = started
        answer.endedAt = Self.now()
        return answer
    }

    /// The operation itself.
    private func perform(on provider: any Provider) async -> RivalAnswer {
        let container = ContainerID(self.container)
        let contents = self.contents.map { FilePath($0) }
        do {
            switch operation {
            case .modify:
                let item = try await provider.modifyItem(
                    ItemID(id), in: container, baseVersion: baseVersion ?? "", changes: RemoteItemChanges(),
                    contents: contents)
                return RivalAnswer(item: item)
            case .delete:
                try await provider.deleteItem(ItemID(id), in: container, baseVersion: baseVersion)
                return RivalAnswer(outcome: .done, version: nil, message: "deleted")
            case .create:
                let template = RemoteItemTemplate(
                    id: ItemID(id), container: container, parentID: parentID.map { ItemID($0) }, name: name ?? "",
                    kind: .file, modificationTime: ConformanceWorkspace.sampleTime, mode: 0o644)
                return RivalAnswer(item: try await provider.createItem(template, contents: contents))
            case .rename:
                let item = try await provider.modifyItem(
                    ItemID(id), in: container, baseVersion: baseVersion ?? "", changes: RemoteItemChanges(name: name),
                    contents: nil)
                return RivalAnswer(item: item)
            }
        } catch {
            return RivalAnswer(error: FolioError(error))
        }
    }

    /// The monotonic clock now, in nanoseconds.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Sleeps until shortly before `instant`, then spins until it (the two rivals start within microseconds).
    static func wait(until instant: UInt64) {
        let margin: UInt64 = 500_000
        let current = now()
        if instant > current + margin {
            let sleep = instant - current - margin
            var request = timespec(tv_sec: Int(sleep / 1_000_000_000), tv_nsec: Int(sleep % 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
        }
        while now() < instant {}
    }
}
