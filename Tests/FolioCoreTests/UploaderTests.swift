import FolioCore
import FolioSync
import Foundation
import Logging
import Synchronization
import SystemPackage
import XCTest

/// A provider that records creates and holds back those of names starting with "slow" until released; the
/// first create of a name starting with "flaky" fails.
private final class HoldingProvider: UploadOnlyProvider {
    let created = Mutex<[String]>([])
    let started = Mutex<[String]>([])
    let released = Atomic(false)
    /// How many creates each ``createItems(_:)`` call had.
    let calls = Mutex<[Int]>([])
    let failedOnce = Mutex<Set<String>>([])

    func createItems(_ creations: [ItemCreation]) async -> [Result<RemoteItem, FolioError>] {
        calls.withLock { $0.append(creations.count) }
        var outcomes: [Result<RemoteItem, FolioError>] = []
        for creation in creations {
            do {
                outcomes.append(.success(try await createItem(creation.template, contents: creation.contents)))
            } catch {
                outcomes.append(.failure(FolioError(error)))
            }
        }
        return outcomes
    }

    func createItem(_ template: RemoteItemTemplate, contents: FilePath?) async throws -> RemoteItem {
        if template.name.hasPrefix("flaky"), failedOnce.withLock({ $0.insert(template.name).inserted }) {
            throw FolioError.providerFailure("simulated", retryable: true)
        }
        started.withLock { $0.append(template.name) }
        if template.name.hasPrefix("slow") {
            for _ in 0..<3000 where !released.load(ordering: .sequentiallyConsistent) {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        created.withLock { $0.append(template.name) }
        return RemoteItem(
            id: template.id, container: template.container, parentID: template.parentID, name: template.name,
            kind: template.kind, size: 0, modificationTime: template.modificationTime, mode: template.mode,
            version: "v1")
    }

    func modifyItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?
    ) async throws -> RemoteItem {
        throw FolioError.notFound("\(id)")
    }

    func deleteItem(_ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?) async throws {}
}

final class UploaderTests: XCTestCase {
    /// Work committed while a slow upload runs starts at once: a slow upload holds back nothing.
    func testASlowUploadDoesNotHoldBackWorkCommittedMeanwhile() async throws {
        let harness = try CoreHarness()
        let provider = HoldingProvider()
        let uploader = Uploader(
            fileSystem: harness.fileSystem, provider: provider, logger: Logger(label: "test"),
            quietPeriod: .zero)
        harness.fileSystem.connect(materializer: nil, uploader: uploader, invalidator: nil)
        uploader.start()
        defer {
            provider.released.store(true, ordering: .sequentiallyConsistent)
            uploader.stop()
        }
        try await harness.write("slow.txt", "takes a while")
        try await waitUntil { provider.started.withLock { $0.contains("slow.txt") } }

        try await harness.write("fast.txt", "quick")
        try await waitUntil { provider.created.withLock { $0.contains("fast.txt") } }
        XCTAssertFalse(provider.created.withLock { $0.contains("slow.txt") }, "the slow upload is still running")

        provider.released.store(true, ordering: .sequentiallyConsistent)
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 }
        XCTAssertEqual(Set(provider.created.withLock { $0 }), ["slow.txt", "fast.txt"])
    }

    /// Small creates waiting together go several to a provider call; one failing in a call is retried alone
    /// while the others are done, and nothing is created twice.
    func testSmallCreatesShareProviderCalls() async throws {
        let harness = try CoreHarness()
        let provider = HoldingProvider()
        let names = (0..<9).map { "f\($0).txt" } + ["flaky.txt"]
        for name in names { try await harness.write(name, "content of \(name)") }
        let uploader = Uploader(
            fileSystem: harness.fileSystem, provider: provider, logger: Logger(label: "test"), createsPerCall: 4,
            minimumBackoff: .milliseconds(10), quietPeriod: .zero)
        harness.fileSystem.connect(materializer: nil, uploader: uploader, invalidator: nil)
        uploader.start()
        defer { uploader.stop() }
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 }
        XCTAssertEqual(provider.calls.withLock { $0.sorted() }, [2, 4, 4], "ten creates waiting go in three calls")
        XCTAssertEqual(provider.created.withLock { $0.sorted() }, names.sorted(), "each created once")
        XCTAssertEqual(provider.failedOnce.withLock { $0 }, ["flaky.txt"])
    }

    /// Work held back because its content could not be opened for now (out of descriptors) is tried again after
    /// a backoff, without waiting for another local change.
    func testWorkWhoseContentCannotBeOpenedForNowIsRetriedByItself() async throws {
        let harness = try CoreHarness()
        let provider = HoldingProvider()
        try await harness.write("doc.txt", "content")
        let uploader = Uploader(
            fileSystem: harness.fileSystem, provider: provider, logger: Logger(label: "test"),
            minimumBackoff: .milliseconds(50), quietPeriod: .zero)
        harness.fileSystem.connect(materializer: nil, uploader: uploader, invalidator: nil)
        defer { uploader.stop() }
        try DescriptorLimit.reached {
            uploader.start()
            // The uploader's first look, with no descriptor to spare (at most 2 s).
            for _ in 0..<2000 where harness.fileSystem.deferredUploadCount == 0 { usleep(1000) }
            XCTAssertGreaterThan(harness.fileSystem.deferredUploadCount, 0, "the upload was not held back")
        }
        XCTAssertEqual(provider.created.withLock { $0 }, [], "sent without its content")
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 }
        XCTAssertEqual(provider.created.withLock { $0 }, ["doc.txt"])
    }

    private func waitUntil(
        file: StaticString = #filePath, line: UInt = #line, _ condition: @escaping () -> Bool
    ) async throws {
        for _ in 0..<1000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertTrue(condition(), "not within 10 s", file: file, line: line)
    }
}
