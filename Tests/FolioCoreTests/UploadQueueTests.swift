@testable import FolioCore
import FolioTesting
import XCTest

/// The upload order: oldest change first, re-queueing moves a key back, removal is honoured, and the core picks
/// work from the front of the queues (nodes and deletes merged by sequence) without losing skipped items.
final class UploadQueueTests: XCTestCase {
    func testOldestFirstWithRequeueAndRemoval() {
        var queue = UploadQueue<String>()
        queue.enqueue("a", sequence: 1)
        queue.enqueue("b", sequence: 2)
        queue.enqueue("c", sequence: 3)
        queue.enqueue("a", sequence: 4)  // changed again: goes behind c
        queue.remove("b")
        XCTAssertEqual(queue.count, 2)
        XCTAssertEqual(queue.oldestSequence(), 3)
        XCTAssertEqual(queue.popOldest()?.key, "c")
        XCTAssertEqual(queue.popOldest()?.key, "a")
        XCTAssertNil(queue.popOldest())
        XCTAssertEqual(queue.count, 0)
    }

    func testStaleEntriesDoNotGrowWithoutBound() {
        var queue = UploadQueue<Int>()
        for sequence in 1...100_000 {
            queue.enqueue(sequence % 10, sequence: UInt64(sequence))
        }
        XCTAssertEqual(queue.count, 10)
        var popped: [Int] = []
        while let entry = queue.popOldest() { popped.append(entry.key) }
        XCTAssertEqual(popped, [1, 2, 3, 4, 5, 6, 7, 8, 9, 0])
    }

    func testCorePicksOldestWorkAndKeepsSkippedItems() async throws {
        let core = try CoreHarness()
        let context = CoreHarness.context()
        for index in 0..<50 {
            try await core.write("f\(index)", "content \(index)")
        }
        // Change f0 again: it is now the newest change.
        try await core.write("f0", "again")
        var order: [String] = []
        while true {
            let work = core.fileSystem.nextUploadWork(limit: 4)
            if work.isEmpty { break }
            for item in work {
                guard case .create(_, let template, _, _, _) = item else { return XCTFail("expected creates") }
                order.append(template.name)
                if template.name == "f7" && !order.dropLast().contains("f7") {
                    // A failed upload is retried later, not dropped.
                    item.closeContents()
                    core.fileSystem.finishUpload(item, result: .failure(.io("simulated failure")))
                    continue
                }
                core.completeCreate(item)
            }
        }
        XCTAssertEqual(order.first, "f1")
        XCTAssertEqual(order.filter { $0 == "f7" }.count, 2, "the failed upload is retried once")
        XCTAssertEqual(Set(order), Set((0..<50).map { "f\($0)" }))
        XCTAssertEqual(order.last, "f0", "the re-dirtied item goes after the others (the failed one is retried in its place)")
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 0)
        // Deletes and node changes are merged by the order of the changes.
        try core.fileSystem.unlink(parent: 1, name: "f3")
        _ = try core.fileSystem.makeDirectory(parent: 1, name: "d", permissions: 0o755, context: context)
        try core.fileSystem.unlink(parent: 1, name: "f4")
        let work = core.fileSystem.nextUploadWork(limit: 10)
        XCTAssertEqual(work.map(\.summary).map { String($0.prefix(6)) }, ["delete", "create", "delete"])
    }

    func testSmallCreatesShareCallsAndEverythingElseGoesAlone() async throws {
        let core = try CoreHarness()
        let context = CoreHarness.context()
        _ = try await core.uploadedDocument("doc", "v1")
        for name in ["a0", "a1"] { try await core.write(name, "small") }
        try await core.write("big", "more than ten bytes")
        try await core.write("a2", "small")
        try await core.write("doc", "changed")
        for name in ["a3", "a4"] { try await core.write(name, "small") }
        _ = try core.fileSystem.makeDirectory(parent: 1, name: "d", permissions: 0o755, context: context)
        try await core.write("d/inside", "small")

        let calls = core.fileSystem.nextUploadCalls(limit: 3, createsPerCall: 4, smallerThan: 10)
        let named = calls.map { $0.map(Self.name) }
        XCTAssertEqual(named, [["a0", "a1", "a2", "a3"], ["big"], ["modify"]], "three calls at most, four creates each")
        var outcomes: [(work: UploadWork, result: Result<RemoteItem?, FolioError>)] = []
        for work in calls.joined() {
            work.closeContents()
            let failed = Self.name(work) == "a1"
            outcomes.append((work, failed ? .failure(.io("simulated")) : .success(Self.uploaded(work))))
        }
        core.fileSystem.finishUploads(outcomes)
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 4, "a1 (failed), a4, d and d/inside are left")

        // A folder and a file share a call; the file inside the folder waits until the folder is created.
        let next = core.fileSystem.nextUploadCalls(limit: 3, createsPerCall: 4, smallerThan: 10)
        XCTAssertEqual(next.count, 1)
        XCTAssertEqual(Set(next.joined().map(Self.name)), ["a1", "a4", "d"])
        next.joined().forEach { $0.closeContents() }
    }

    func testAFileWhoseContentCannotBeReadIsNotSentWithout() async throws {
        let core = try CoreHarness()
        try await core.write("doc", "content")
        let content = core.directory + "/content"
        let files = try FileManager.default.contentsOfDirectory(atPath: content)
        for name in files where name != ContentCache.emptyVersion {
            try FileManager.default.removeItem(atPath: content + "/" + name)
        }
        XCTAssertEqual(core.fileSystem.nextUploadWork(limit: 4).map(\.summary), [], "sent as an empty file")
        // Gone for good: the item says so (and `folio status` names it), it is not retried for nothing.
        let state = try core.fileSystem.extendedAttribute(try core.ino("doc"), name: "user.folio.state")
        XCTAssertEqual(String(decoding: state, as: UTF8.self), "failed")
        XCTAssertTrue(core.fileSystem.status().failures.contains { $0.contains("doc") && $0.contains("missing") },
                      "\(core.fileSystem.status().failures)")
        XCTAssertFalse(core.fileSystem.takeDeferredUploads())
        // A new version starts over.
        try await core.write("doc", "written again")
        XCTAssertEqual(core.fileSystem.nextUploadWork(limit: 4).map(Self.name), ["doc"])
    }

    func testAFileWhoseContentCannotBeReadFailsWithTheReason() async throws {
        let core = try CoreHarness()
        try await core.write("doc", "content")
        let path = try Self.versionFile(of: core)
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path)  // ELOOP, for good
        XCTAssertEqual(core.fileSystem.nextUploadWork(limit: 4).map(\.summary), [], "sent without its content")
        let state = try core.fileSystem.extendedAttribute(try core.ino("doc"), name: "user.folio.state")
        XCTAssertEqual(String(decoding: state, as: UTF8.self), "failed")
        XCTAssertTrue(core.fileSystem.status().failures.contains { $0.contains("cannot be read") },
                      "\(core.fileSystem.status().failures)")
        XCTAssertFalse(core.fileSystem.takeDeferredUploads(), "retried although nothing will change")
    }

    func testAFileWhoseContentCannotBeOpenedForNowIsTriedAgain() async throws {
        let core = try CoreHarness()
        try await core.write("doc", "content")
        // Out of descriptors: opening the version fails with EMFILE until some are free again.
        let work = try DescriptorLimit.reached { core.fileSystem.nextUploadWork(limit: 4) }
        XCTAssertEqual(work.map(\.summary), [], "sent without its content")
        XCTAssertTrue(core.fileSystem.takeDeferredUploads(), "the uploader is not told to try again")
        XCTAssertFalse(core.fileSystem.takeDeferredUploads(), "told once")
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1, "still waiting for upload")
        let state = try core.fileSystem.extendedAttribute(try core.ino("doc"), name: "user.folio.state")
        XCTAssertEqual(String(decoding: state, as: UTF8.self), "dirty")
        let retried = core.fileSystem.nextUploadWork(limit: 4)
        defer { retried.forEach { $0.closeContents() } }
        guard case .create(_, _, let contents?, _, _)? = retried.first else {
            return XCTFail("expected the create with its content: \(retried.map(\.summary))")
        }
        XCTAssertEqual(try String(contentsOfFile: contents.string, encoding: .utf8), "content")
    }

    /// The path of the one version file `core` has besides the empty one.
    static func versionFile(of core: CoreHarness) throws -> String {
        let content = core.directory + "/content"
        let name = try XCTUnwrap(
            try FileManager.default.contentsOfDirectory(atPath: content).first { $0 != ContentCache.emptyVersion })
        return content + "/" + name
    }

    func testAMetadataOnlyChangeHoldsNoDescriptor() async throws {
        let core = try CoreHarness()
        _ = try await core.uploadedDocument("doc", "content")
        try core.fileSystem.rename(parent: 1, name: "doc", newParent: 1, newName: "renamed", flags: [])
        let work = core.fileSystem.nextUploadWork(limit: 4)
        guard case .modify(_, _, _, _, let changes, nil, _, _)? = work.first else {
            return XCTFail("expected a metadata-only modify: \(work.map(\.summary))")
        }
        XCTAssertEqual(changes.name, "renamed")
        work.forEach { $0.closeContents() }
        // Only this process's descriptors of version files count (other threads open and close their own).
        let content = core.directory + "/content/"
        let versionsOpen = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0))?.hasPrefix(content)
                ?? false
        }
        XCTAssertEqual(versionsOpen, [], "a descriptor of the version was left open")
    }

    /// The name of the item a create is for; "modify" or "delete" for the others.
    private static func name(_ work: UploadWork) -> String {
        switch work {
        case .create(_, let template, _, _, _): return template.name
        case .modify: return "modify"
        case .delete: return "delete"
        }
    }

    /// What the provider answers for an upload that went through.
    private static func uploaded(_ work: UploadWork) -> RemoteItem? {
        switch work {
        case .create(_, let template, _, _, _):
            return RemoteItem(
                id: template.id, container: template.container, parentID: template.parentID, name: template.name,
                kind: template.kind, size: 0, modificationTime: .now(), mode: template.mode, version: "v1")
        case .modify(_, let id, let container, _, _, _, _, _):
            return RemoteItem(
                id: id, container: container, parentID: nil, name: "doc", kind: .file, size: 0,
                modificationTime: .now(), mode: 0o644, version: "v2")
        case .delete:
            return nil
        }
    }

    func testFailedDeleteIsRetried() async throws {
        let core = try CoreHarness()
        try await core.write("gone", "x")
        guard let created = core.fileSystem.nextUploadWork(limit: 4).first,
              let template = core.completeCreate(created) else { return XCTFail("expected a create") }
        try core.fileSystem.unlink(parent: 1, name: "gone")
        let first = core.fileSystem.nextUploadWork(limit: 4)
        XCTAssertEqual(first.map(\.summary), ["delete \(template.id)"])
        core.fileSystem.finishUpload(first[0], result: .failure(.offline("simulated")))
        let retry = core.fileSystem.nextUploadWork(limit: 4)
        XCTAssertEqual(retry.map(\.summary), ["delete \(template.id)"], "a failed delete goes back into the queue")
        guard let again = retry.first else { return }
        core.fileSystem.finishUpload(again, result: .success(nil))
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 0)
        XCTAssertTrue(core.fileSystem.nextUploadWork(limit: 4).isEmpty)
    }
}
