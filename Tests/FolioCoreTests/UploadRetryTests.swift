import FolioCore
import FolioSync
import FolioTesting
import Foundation
import Logging
import Synchronization
import SystemPackage
import XCTest

/// A provider whose creates fail with ``failure`` while it is set; counts the attempts.
private final class RefusingProvider: UploadOnlyProvider {
    let failure = Mutex<FolioError?>(nil)
    /// When set, only creates of this name fail.
    let refusedName = Mutex<String?>(nil)
    let attempts = Atomic(0)
    /// Create attempts by name.
    let attemptsByName = Mutex<[String: Int]>([:])
    let created = Mutex<[String]>([])
    /// A name renames to which fail with `.invalidArgument`; modify attempts by name.
    let refusedRename = Mutex<String?>(nil)
    let modifiesByName = Mutex<[String: Int]>([:])

    func createItem(_ template: RemoteItemTemplate, contents: FilePath?) async throws -> RemoteItem {
        attempts.add(1, ordering: .sequentiallyConsistent)
        attemptsByName.withLock { $0[template.name, default: 0] += 1 }
        if let failure = failure.withLock({ $0 }), refusedName.withLock({ $0 == nil || $0 == template.name }) {
            throw failure
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
        // Only metadata changes come here (a folder's time sent again, a rename): taken as they are.
        guard let name = changes.name else { throw FolioError.notFound("\(id)") }
        modifiesByName.withLock { $0[name, default: 0] += 1 }
        if refusedRename.withLock({ $0 == name }) { throw FolioError.invalidArgument("the remote refuses \(name)") }
        return RemoteItem(
            id: id, container: container, parentID: changes.parentID ?? nil, name: name,
            kind: name.contains(".") ? .file : .directory, size: 0,
            modificationTime: changes.modificationTime ?? .now(), mode: changes.mode ?? 0o755, version: "v2")
    }

    func deleteItem(_ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?) async throws {}
}

/// A manual clock that takes a moment to tell the time: widens the windows between the uploader's looks at its
/// own state, so that races there show.
private struct DawdlingClock: Clock {
    let base: ManualClock
    var now: ManualClock.Instant {
        usleep(300)
        return base.now
    }
    var minimumResolution: Duration { base.minimumResolution }
    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}

/// DESIGN.md §2 "Upload": a failure that can clear is retried forever with a capped backoff, never made
/// permanent; `failed` is only for what needs the user, and is retried on request.
final class UploadRetryTests: XCTestCase {
    func testProviderErrorsAreClassifiedAsClearingByThemselvesOrNeedingTheUser() {
        let clearing: [FolioError] = [
            .offline("the remote folder is missing"), .noSpace("remote full"), .busy("locked"),
            .providerFailure("503", retryable: true), .notFound("container com.folio.drive"), .io("EIO"),
            .interrupted("cancelled"),
        ]
        for error in clearing {
            XCTAssertFalse(UploadFailure(error).needsUser, "\(error) clears by itself")
        }
        let needingTheUser: [FolioError] = [
            .accessDenied("remote folder"), .notPermitted("remote folder"), .nameTooLong("a name"),
            .invalidArgument("a name with a colon"), .readOnly("remote"), .providerFailure("403", retryable: false),
        ]
        for error in needingTheUser {
            XCTAssertTrue(UploadFailure(error).needsUser, "\(error) needs the user")
        }
        XCTAssertTrue(UploadFailure(.system(.readOnlyFileSystem, "remote")).needsUser, "a read-only remote")
        XCTAssertFalse(UploadFailure(.system(.noSpace, "remote")).needsUser, "a full remote")
        XCTAssertTrue(UploadFailure(.noSpace("x")).remedy.contains("free some"))
        XCTAssertTrue(UploadFailure(.accessDenied("x")).remedy.contains("folio retry"))
        XCTAssertTrue(UploadFailure.failedReason(.nameTooLong("x")).contains("needs you: the remote refuses the name"))
    }

    func testTheBackoffDoublesUpToItsCapAndStartsOver() {
        var backoff = UploadBackoff(minimum: .milliseconds(100), maximum: .seconds(1))
        let waits = (0..<7).map { _ in backoff.failed() }
        XCTAssertEqual(waits, [100, 200, 400, 800, 1000, 1000, 1000].map { Duration.milliseconds($0) })
        backoff.reset()
        XCTAssertEqual(backoff.failed(), .milliseconds(100))

        var none = UploadBackoff(minimum: .zero, maximum: .zero)
        XCTAssertEqual(none.failed(), UploadBackoff.floor, "never a busy loop")
    }

    /// The remote out of space: the upload waits (dirty, shown as waiting), retried at waits that double up to the
    /// cap and then stay there, as long as it takes; it lands once there is room, never `failed`.
    func testAFailureThatClearsIsRetriedForeverWithACappedBackoff() async throws {
        let harness = try CoreHarness()
        let provider = RefusingProvider()
        provider.failure.withLock { $0 = .noSpace("the remote's disk is full") }
        let clock = ManualClock()
        let uploader = Uploader(
            fileSystem: harness.fileSystem, provider: provider, logger: Logger(label: "test"), clock: clock,
            minimumBackoff: .milliseconds(100), maximumBackoff: .milliseconds(400), quietPeriod: .zero)
        harness.fileSystem.connect(materializer: nil, uploader: uploader, invalidator: nil)
        try await harness.write("doc.txt", "content")
        uploader.start()
        defer { uploader.stop() }
        let ino = try harness.ino("doc.txt")

        for (attempt, wait) in [100, 200, 400, 400, 400, 400].enumerated() {
            try await waitUntil { provider.attempts.load(ordering: .sequentiallyConsistent) == attempt + 1 }
            try await waitUntil { !clock.sleepingUntil.isEmpty }
            let deadline = try XCTUnwrap(clock.sleepingUntil.first)
            XCTAssertEqual(clock.now.duration(to: deadline), .milliseconds(wait), "wait before try \(attempt + 2)")
            XCTAssertEqual(provider.attempts.load(ordering: .sequentiallyConsistent), attempt + 1, "no retry before")
            XCTAssertEqual(harness.fileSystem.node(ino)?.state.name, "dirty", "waits, never failed")
            let waiting = harness.fileSystem.status().waiting
            XCTAssertEqual(waiting.count, 1)
            XCTAssertTrue(waiting.first?.hasPrefix("doc.txt: no space: ") ?? false, "\(waiting)")
            XCTAssertTrue(waiting.first?.contains("free some") ?? false, "\(waiting)")
            XCTAssertEqual(harness.fileSystem.status().failures, [])
            clock.advance(by: .milliseconds(wait))
        }

        provider.failure.withLock { $0 = nil }  // room again
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 || !clock.sleepingUntil.isEmpty }
        clock.advance(by: .milliseconds(400))
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 }
        XCTAssertEqual(provider.created.withLock { $0 }, ["doc.txt"])
        XCTAssertEqual(harness.fileSystem.node(ino)?.state, .materialized)
        XCTAssertEqual(harness.fileSystem.status().waiting, [])
    }

    /// A failure is always seen before its item can go again: wake-ups of the uploader while a call fails (other
    /// work reported, a commit's store write ending) never start the next try before the backoff has passed.
    /// Raced over many rounds: the uploader is woken in a tight loop from another thread while the call fails, on a clock
    /// that is slow to read.
    func testWakeUpsWhileACallFailsNeverCutItsBackoff() async throws {
        for round in 0..<25 {
            let harness = try CoreHarness()
            let provider = RefusingProvider()
            provider.failure.withLock { $0 = .offline("the server is away") }
            let clock = ManualClock()
            let uploader = Uploader(
                fileSystem: harness.fileSystem, provider: provider, logger: Logger(label: "test"),
                clock: DawdlingClock(base: clock), minimumBackoff: .seconds(1), maximumBackoff: .seconds(1), quietPeriod: .zero)
            harness.fileSystem.connect(materializer: nil, uploader: uploader, invalidator: nil)
            try await harness.write("doc.txt", "content")
            let waking = Atomic(true)
            let wakeUps = Atomic(0)
            let waker = Thread {
                while waking.load(ordering: .relaxed) {
                    uploader.uploadsPending()
                    wakeUps.add(1, ordering: .relaxed)
                }
            }
            waker.start()
            uploader.start()
            try await waitUntil { provider.attempts.load(ordering: .sequentiallyConsistent) >= 1 }
            try await waitUntil { !clock.sleepingUntil.isEmpty }
            let seen = wakeUps.load(ordering: .relaxed)
            try await waitUntil { wakeUps.load(ordering: .relaxed) > seen + 200 }  // woken on after the failure
            waking.store(false, ordering: .relaxed)
            uploader.stop()
            XCTAssertEqual(provider.attempts.load(ordering: .sequentiallyConsistent), 1, "round \(round): no try before the wait")
        }
    }

    /// `n.txt` uploaded, removed by one process and written again by another (a new item), on a manual clock.
    private func documentRemovedAndMadeAgainByAnotherProcess() async throws
        -> (ManualClock, CoreHarness, RemoteItemTemplate) {
        let clock = ManualClock()
        let harness = try CoreHarness(clock: clock)
        let old = try await harness.uploadedDocument("n.txt", "old")
        try harness.fileSystem.unlink(parent: 1, name: "n.txt", context: CoreHarness.context(300))
        try await harness.write("n.txt", "new", process: 400)
        return (clock, harness, old)
    }

    /// A file deleted here and a new one made at its name (another program: a new item): the create is ordered
    /// after the delete it depends on, so it never finds the name taken (issue 36: it was retried thousands of
    /// times a second while the delete waited).
    func testACreateAtANameWhoseDeleteIsPendingWaitsForTheDelete() async throws {
        let (clock, harness, old) = try await documentRemovedAndMadeAgainByAnotherProcess()
        XCTAssertEqual(harness.fileSystem.nextUploadWork(limit: 4).map(\.summary), [], "the delete waits for a save")
        clock.advance(by: .seconds(3))  // past the window in which a save could still take the old item over
        let first = harness.fileSystem.nextUploadWork(limit: 4)
        XCTAssertEqual(first.count, 1, "only the delete goes: \(first.map(\.summary))")
        guard case .delete(let tombstone, _)? = first.first else { return XCTFail("\(first.map(\.summary))") }
        XCTAssertEqual(tombstone.itemID, old.id)
        XCTAssertEqual(harness.fileSystem.nextUploadWork(limit: 4).map(\.summary), [], "the create waits for it")
        harness.fileSystem.finishUpload(first[0], result: .success(nil))
        let second = harness.fileSystem.nextUploadWork(limit: 4)
        XCTAssertEqual(second.count, 1, "\(second.map(\.summary))")
        guard case .create(_, let template, _, _, _)? = second.first else { return XCTFail("\(second.map(\.summary))") }
        XCTAssertNotEqual(template.id, old.id)
        XCTAssertEqual(template.name, "n.txt")
        second.forEach { $0.closeContents() }
    }

    /// The same after a crash: the order is not kept across a restart, so the create may reach the remote before
    /// the delete of the old item (both go again at once) and find the name taken. That clash passes once the
    /// delete lands: the create waits and is retried (after a backoff), never `failed` for the user.
    func testANameTakenByAnItemWhoseDeleteIsPendingIsRetriedNotFailed() async throws {
        let (clock, harness, old) = try await documentRemovedAndMadeAgainByAnotherProcess()
        try harness.remount()  // as after a crash: what orders the create after the delete is not stored
        clock.advance(by: .seconds(3))  // past the window in which a save could still take the old item over
        let works = harness.fileSystem.nextUploadWork(limit: 2)  // the delete and the create, at once
        let create = try XCTUnwrap(works.first { work in
            if case .create(_, let template, _, _, _) = work { return template.id != old.id }
            return false
        }, "\(works.map(\.summary))")
        create.closeContents()
        XCTAssertEqual(
            harness.fileSystem.finishUpload(create, result: .failure(.exists("n.txt")))?.needsUser, false,
            "the uploader is told to back off and retry it")
        XCTAssertEqual(harness.fileSystem.status().failures, [], "a passing clash needs nobody")
        XCTAssertTrue(harness.fileSystem.status().waiting.contains { $0.hasPrefix("n.txt") },
            "\(harness.fileSystem.status().waiting)")
        XCTAssertNotEqual(harness.fileSystem.node(try harness.ino("n.txt"))?.state.name, "failed")

        // Once nothing else is on its way, a name still taken is a real clash: it needs the user.
        for work in works where work.summary.hasPrefix("delete") {
            harness.fileSystem.finishUpload(work, result: .success(nil))
        }
        let again = try XCTUnwrap(harness.fileSystem.nextUploadWork(limit: 2).first, "the create is tried again")
        again.closeContents()
        harness.fileSystem.finishUpload(again, result: .failure(.exists("n.txt")))
        XCTAssertEqual(harness.fileSystem.status().failures.count, 1, "a clash that stays needs the user")
    }

    /// Access denied on the remote: the item is `failed`, with what to do; retrying it (as `folio retry` and a
    /// mount do) uploads it at once, without waiting for the backoff.
    func testAFailureThatNeedsTheUserIsFailedUntilRetried() async throws {
        let harness = try CoreHarness()
        let provider = RefusingProvider()
        provider.failure.withLock { $0 = .accessDenied("the remote folder") }
        let clock = ManualClock()
        let uploader = Uploader(
            fileSystem: harness.fileSystem, provider: provider, logger: Logger(label: "test"), clock: clock,
            minimumBackoff: .seconds(100), maximumBackoff: .seconds(100), quietPeriod: .zero)
        harness.fileSystem.connect(materializer: nil, uploader: uploader, invalidator: nil)
        try await harness.write("doc.txt", "content")
        uploader.start()
        defer { uploader.stop() }
        let ino = try harness.ino("doc.txt")
        try await waitUntil { harness.fileSystem.node(ino)?.state.name == "failed" }
        let failures = harness.fileSystem.status().failures
        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(failures.first?.hasPrefix("doc.txt: access denied: the remote folder") ?? false, "\(failures)")
        XCTAssertTrue(failures.first?.contains("needs you: ") ?? false, "\(failures)")
        XCTAssertTrue(failures.first?.contains("folio retry") ?? false, "\(failures)")
        XCTAssertEqual(harness.fileSystem.status().waiting, [])

        provider.failure.withLock { $0 = nil }  // the user gave access
        XCTAssertEqual(harness.fileSystem.retryFailedUploads(under: ino), 1)
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 }
        XCTAssertEqual(provider.created.withLock { $0 }, ["doc.txt"])
        XCTAssertEqual(harness.fileSystem.node(ino)?.state, .materialized)
        XCTAssertEqual(harness.fileSystem.status().failures, [])
    }

    /// A folder create the remote refuses until the user acts has no content state to make `failed`: it is held
    /// back (never retried by itself), counted and listed as needing the user, and the uploads after it do not
    /// wait for any backoff; `folio retry` (or a new change) sends it again.
    func testAFolderCreateThatNeedsTheUserIsHeldBackWithoutSlowingOtherUploads() async throws {
        let harness = try CoreHarness()
        let provider = RefusingProvider()
        provider.failure.withLock { $0 = .accessDenied("the remote folder") }
        provider.refusedName.withLock { $0 = "locked" }
        let clock = ManualClock()
        let uploader = Uploader(
            fileSystem: harness.fileSystem, provider: provider, logger: Logger(label: "test"), clock: clock,
            minimumBackoff: .seconds(100), maximumBackoff: .seconds(100), quietPeriod: .zero)
        harness.fileSystem.connect(materializer: nil, uploader: uploader, invalidator: nil)
        let folder = try harness.fileSystem.makeDirectory(
            parent: FolioFileSystem.rootIno, name: "locked", permissions: 0o755, context: CoreHarness.context())
        uploader.start()
        defer { uploader.stop() }
        let attempts = { provider.attemptsByName.withLock { $0["locked"] ?? 0 } }
        try await waitUntil { harness.fileSystem.status().waitingForUser == 1 }
        XCTAssertEqual(attempts(), 1)
        let status = harness.fileSystem.status()
        XCTAssertEqual(status.pendingUploads, 1)
        XCTAssertEqual(status.failures.count, 1, "\(status.failures)")
        XCTAssertTrue(status.failures.first?.hasPrefix("locked: access denied: ") ?? false, "\(status.failures)")
        XCTAssertTrue(status.failures.first?.contains("folio retry") ?? false, "\(status.failures)")
        XCTAssertEqual(status.waiting, [])

        // Later edits go at once (the clock never moves): no backoff; the folder is not tried again.
        try await harness.write("first.txt", "first")
        try await waitUntil { provider.created.withLock { $0 } == ["first.txt"] }
        clock.advance(by: .seconds(1000))
        try await harness.write("second.txt", "second")
        try await waitUntil { provider.created.withLock { $0 } == ["first.txt", "second.txt"] }
        XCTAssertEqual(attempts(), 1, "held back, not retried")
        XCTAssertEqual(harness.fileSystem.status().waitingForUser, 1)
        // (second.txt's outcome is recorded a moment after the provider has it.)
        try await waitUntil { harness.fileSystem.pendingUploadCount == 1 }

        // A file made inside it waits for it, and for the user too.
        try await harness.write("locked/inside.txt", "inside")
        try await waitUntil { harness.fileSystem.status().waitingForUser == 2 }

        // The user gave access: `folio retry` sends it and what waited for it.
        provider.failure.withLock { $0 = nil }
        XCTAssertEqual(harness.fileSystem.retryFailedUploads(), 1)
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 }
        XCTAssertEqual(attempts(), 2)
        XCTAssertEqual(provider.created.withLock { $0 }, ["first.txt", "second.txt", "locked", "inside.txt"])
        XCTAssertEqual(harness.fileSystem.status().failures, [])
        XCTAssertEqual(harness.fileSystem.status().waitingForUser, 0)
        XCTAssertNotNil(harness.fileSystem.node(folder.ino)?.remoteVersion)
    }

    /// A rename the remote refuses until the user acts is held back the same way; a new change sends it again.
    func testARenameThatNeedsTheUserIsHeldBackUntilChangedAgain() async throws {
        let harness = try CoreHarness()
        let provider = RefusingProvider()
        provider.refusedRename.withLock { $0 = "bad.txt" }
        let clock = ManualClock()
        let uploader = Uploader(
            fileSystem: harness.fileSystem, provider: provider, logger: Logger(label: "test"), clock: clock,
            minimumBackoff: .seconds(100), maximumBackoff: .seconds(100), quietPeriod: .zero)
        harness.fileSystem.connect(materializer: nil, uploader: uploader, invalidator: nil)
        try await harness.write("doc.txt", "content")
        uploader.start()
        defer { uploader.stop() }
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 }
        let root = FolioFileSystem.rootIno
        try harness.fileSystem.rename(parent: root, name: "doc.txt", newParent: root, newName: "bad.txt", flags: [])
        try await waitUntil { harness.fileSystem.status().waitingForUser == 1 }
        let failures = harness.fileSystem.status().failures
        XCTAssertTrue(failures.first?.hasPrefix("bad.txt: ") ?? false, "\(failures)")
        XCTAssertTrue(failures.first?.contains("needs you: the remote refuses the name") ?? false, "\(failures)")

        try await harness.write("other.txt", "other")
        try await waitUntil { provider.created.withLock { $0 } == ["doc.txt", "other.txt"] }
        XCTAssertEqual(provider.modifiesByName.withLock { $0["bad.txt"] }, 1, "held back, not retried")

        // Renamed again: a new change, sent at once.
        try harness.fileSystem.rename(parent: root, name: "bad.txt", newParent: root, newName: "good.txt", flags: [])
        try await waitUntil { harness.fileSystem.pendingUploadCount == 0 }
        XCTAssertEqual(provider.modifiesByName.withLock { $0["good.txt"] }, 1)
        XCTAssertEqual(harness.fileSystem.status().failures, [])
        XCTAssertEqual(harness.fileSystem.status().waitingForUser, 0)
    }

    private func waitUntil(
        file: StaticString = #filePath, line: UInt = #line, _ condition: @escaping () -> Bool
    ) async throws {
        for _ in 0..<1000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertTrue(condition(), "not within 10 s", file: file, line: line)
    }
}
