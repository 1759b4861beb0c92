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
