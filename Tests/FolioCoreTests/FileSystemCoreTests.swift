import FolioCore
import FolioTesting
import Foundation
import Logging
import SystemPackage
import XCTest

/// The filesystem core without FUSE: commits, snapshots, sessions, identity on save, upload bookkeeping.
final class FileSystemCoreTests: XCTestCase {
    func testCommitIsVisibleAndSurvivesRemount() async throws {
        let core = try CoreHarness()
        try await core.write("a.txt", "hello")
        let a = try core.ino("a.txt")
        do {
            let value = try await core.read("a.txt")
            XCTAssertEqual(value, "hello")
        }
        XCTAssertEqual(core.fileSystem.node(a)?.state, .dirty(generation: 2))
        try core.remount()
        do {
            let value = try await core.read("a.txt")
            XCTAssertEqual(value, "hello")
        }
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1)
    }

    func testReaderKeepsSnapshotWhileWriterCommits() async throws {
        let core = try CoreHarness()
        try await core.write("doc", "version one")
        let reader = try await core.fileSystem.open(try core.ino("doc"), flags: O_RDONLY, context: CoreHarness.context(7))
        try await core.write("doc", "version two, longer")
        XCTAssertEqual(try core.read(handle: reader.handle), "version one")
        do {
            let value = try await core.read("doc")
            XCTAssertEqual(value, "version two, longer")
        }
        try core.fileSystem.release(reader.handle)
    }

    func testUncommittedWritesAreInvisibleToOtherProcesses() async throws {
        let core = try CoreHarness()
        try await core.write("doc", "committed")
        let writer = try await core.openForWriting("doc", truncate: true, process: 1)
        _ = try "draft".utf8CString.dropLast().withUnsafeBytes { try core.fileSystem.write(writer, offset: 0, bytes: $0) }
        do {
            let value = try await core.read("doc", process: 2)
            XCTAssertEqual(value, "committed")
        }
        do {
            let value = try await core.read("doc", process: 1)
            XCTAssertEqual(value, "draft", "the writer's own process joins its session")
        }
        try core.fileSystem.synchronize(writer)
        do {
            let value = try await core.read("doc", process: 2)
            XCTAssertEqual(value, "draft", "fsync commits")
        }
        try core.fileSystem.release(writer)
    }

    func testSecondWriterGetsBusyAfterTheWait() async throws {
        let core = try CoreHarness(writeWait: .milliseconds(150))
        try await core.write("doc", "x")
        let first = try await core.openForWriting("doc", truncate: false, process: 1)
        do {
            _ = try await core.openForWriting("doc", truncate: false, process: 2)
            XCTFail("the second writer must not get in")
        } catch let error as FolioError {
            XCTAssertEqual(error.errno, .resourceBusy)
        }
        let joined = try await core.openForWriting("doc", truncate: false, process: 1)
        try core.fileSystem.release(joined)
        try core.fileSystem.release(first)
        let second = try await core.openForWriting("doc", truncate: false, process: 2)
        try core.fileSystem.release(second)
    }

    func testRenameOverKeepsTargetIdentityAndAttributes() async throws {
        let core = try CoreHarness()
        try await core.write("doc", "old")
        let target = try core.ino("doc")
        let id = core.fileSystem.node(target)!.itemID
        try core.fileSystem.setExtendedAttribute(target, name: "user.xdg.tags", value: Array("red".utf8), mustCreate: false, mustReplace: false)
        try await core.write(".doc.tmp", "new")
        try core.fileSystem.rename(parent: 1, name: ".doc.tmp", newParent: 1, newName: "doc", flags: [])
        let node = core.fileSystem.node(try core.ino("doc"))!
        XCTAssertEqual(node.itemID, id)
        XCTAssertEqual(node.xattrs["user.xdg.tags"], Array("red".utf8))
        do {
            let value = try await core.read("doc")
            XCTAssertEqual(value, "new")
        }
        XCTAssertEqual(try core.list(""), ["doc"])
    }

    func testUploadWorkOrderAndGenerationCheck() async throws {
        let core = try CoreHarness()
        _ = try core.fileSystem.makeDirectory(parent: 1, name: "dir", permissions: 0o755, context: CoreHarness.context())
        try await core.write("dir/file", "content")
        // The child waits until its folder exists remotely.
        var work = core.fileSystem.nextUploadWork(limit: 10)
        XCTAssertEqual(work.count, 1)
        guard case .create(let dirIno, let template, _, _, _) = work[0] else { return XCTFail("expected a create") }
        XCTAssertEqual(template.name, "dir")
        let remoteDir = RemoteItem(
            id: template.id, container: .drive, parentID: nil, name: "dir", kind: .directory, size: 0,
            modificationTime: .now(), mode: 0o755, version: "d1")
        core.fileSystem.finishUpload(work[0], result: .success(remoteDir))
        XCTAssertEqual(core.fileSystem.node(dirIno)?.remoteVersion, "d1")
        work = core.fileSystem.nextUploadWork(limit: 10)
        XCTAssertEqual(work.count, 1)
        guard case .create(let fileIno, let fileTemplate, _, let generation, _) = work[0] else { return XCTFail() }
        XCTAssertEqual(core.fileSystem.node(fileIno)?.state, .uploading(generation: generation))
        // A commit while the upload runs: the success must not mark the item clean.
        try await core.write("dir/file", "newer")
        work.forEach { $0.closeContents() }
        core.fileSystem.finishUpload(work[0], result: .success(RemoteItem(
            id: fileTemplate.id, container: .drive, parentID: template.id, name: "file", kind: .file, size: 7,
            modificationTime: .now(), mode: 0o644, version: "f1")))
        guard case .dirty = core.fileSystem.node(fileIno)!.state else { return XCTFail("must stay dirty") }
        // The file's newer version, and the folder's time: the file's create gave the folder a new one remotely.
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 2)
        XCTAssertEqual(core.fileSystem.node(dirIno)?.timeDirty, true)
    }

    func testAFolderTimeIsSentAgainAfterAChildLandsAndTheRemoteEchoIsNotTaken() async throws {
        let core = try CoreHarness()
        let dir = try core.fileSystem.makeDirectory(
            parent: 1, name: "dir", permissions: 0o755, context: CoreHarness.context())
        var work = core.fileSystem.nextUploadWork(limit: 10)
        guard let dirTemplate = core.completeCreate(work[0], version: "d1") else { return XCTFail("no create") }
        try await core.write("dir/file", "content")
        let userTime = Timestamp(seconds: 1_577_836_800, nanoseconds: 0)
        _ = try core.fileSystem.setAttributesNow(dir.ino, AttributeChanges(modificationTime: userTime), handle: nil)
        work = core.fileSystem.nextUploadWork(limit: 10)
        guard let fileWork = work.first(where: { if case .create = $0 { true } else { false } }),
              let timeWork = work.first(where: { if case .modify = $0 { true } else { false } }) else {
            return XCTFail("expected the file's create and the folder's time: \(work)")
        }
        // The folder's time lands first; then the file's create lands, and the remote gives the folder its own
        // time, which an enumeration sees before the create's outcome is recorded.
        let remoteDir = { (time: Timestamp, version: String) in
            RemoteItem(id: dirTemplate.id, container: .drive, parentID: nil, name: "dir", kind: .directory, size: 0,
                       modificationTime: time, mode: 0o755, version: version)
        }
        core.fileSystem.finishUpload(timeWork, result: .success(remoteDir(userTime, "d2")))
        let echo = remoteDir(.now(), "d3")
        try core.fileSystem.applyEnumeration(of: .drive, items: [echo])
        XCTAssertEqual(core.fileSystem.node(dir.ino)?.modificationTime, userTime, "the echo was taken")
        XCTAssertNotNil(core.completeCreate(fileWork, version: "f1"))
        XCTAssertEqual(core.fileSystem.node(dir.ino)?.timeDirty, true, "the folder's time is not sent again")
        work = core.fileSystem.nextUploadWork(limit: 10)
        guard case .modify(_, _, _, _, let changes, _, _, _) = work.first else { return XCTFail("\(work)") }
        XCTAssertEqual(changes.modificationTime, userTime)
    }

    func testStatusCountsStatesAndNamesFailures() async throws {
        let core = try CoreHarness()
        try await core.write("a", "1")
        try await core.write("b", "2")
        var status = core.fileSystem.status()
        XCTAssertEqual(status.states, ["dirty": 2], "container roots are not counted")
        let work = core.fileSystem.nextUploadWork(limit: 10)
        XCTAssertEqual(work.count, 2)
        XCTAssertEqual(core.fileSystem.status().states, ["uploading": 2])
        core.completeCreate(work[0])
        work[1].closeContents()
        core.fileSystem.finishUpload(work[1], result: .failure(.invalidArgument("refused name")))
        status = core.fileSystem.status()
        XCTAssertEqual(status.states, ["materialized": 1, "failed": 1])
        XCTAssertEqual(status.failures.count, 1)
        XCTAssertTrue(status.failures.first?.contains("refused name") ?? false, "\(status.failures)")
        // A failed item changed again is dirty again, and no longer named as failed; a deleted one is not counted.
        let failedName = status.failures.first?.hasPrefix("a:") == true ? "a" : "b"
        try await core.write(failedName, "again")
        status = core.fileSystem.status()
        XCTAssertEqual(status.states, ["materialized": 1, "dirty": 1])
        XCTAssertEqual(status.failures, [])
        try core.fileSystem.unlink(parent: 1, name: failedName)
        XCTAssertEqual(core.fileSystem.status().states, ["materialized": 1])
        try core.remount()
        XCTAssertEqual(core.fileSystem.status().states, ["materialized": 1], "counted again after a restart")
    }

    func testUnlinkQueuesARemoteDeleteOnlyForUploadedItems() async throws {
        let core = try CoreHarness()
        try await core.write("local-only", "x")
        try core.fileSystem.unlink(parent: 1, name: "local-only")
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 0, "never uploaded: nothing to delete remotely")
        XCTAssertThrowsError(try core.fileSystem.unlink(parent: 1, name: "local-only")) { error in
            XCTAssertEqual((error as? FolioError)?.errno, .noSuchFileOrDirectory)
        }
    }

    func testStoreFailureLeavesTreeUnchanged() async throws {
        let store = InMemoryMetadataStore()
        let directory = NSTemporaryDirectory() + "folio-core-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try ContentCache(directory: FilePath(directory))
        let fileSystem = try FolioFileSystem(store: store, cache: cache, logger: Logger(label: "test"))
        let context = CoreHarness.context()
        store.failApplies(with: .noSpace("disk full"))
        // Staged for the next group write; that write fails, and from then on changes are written at once.
        XCTAssertNoThrow(try fileSystem.makeDirectory(parent: 1, name: "staged", permissions: 0o755, context: context))
        fileSystem.flushDeferredWrites()
        XCTAssertThrowsError(try fileSystem.makeDirectory(parent: 1, name: "d", permissions: 0o755, context: context)) {
            XCTAssertEqual(($0 as? FolioError)?.errno, .noSpace)
        }
        XCTAssertThrowsError(try fileSystem.lookup(parent: 1, name: "d"))
        XCTAssertThrowsError(try fileSystem.createFile(
            parent: 1, name: "f", permissions: 0o644, flags: O_WRONLY, context: context)) {
            XCTAssertEqual(($0 as? FolioError)?.errno, .noSpace)
        }
        XCTAssertThrowsError(try fileSystem.lookup(parent: 1, name: "f"))
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [], [ContentCache.emptyVersion])
        store.failApplies(with: nil)
        XCTAssertNoThrow(try fileSystem.makeDirectory(parent: 1, name: "d", permissions: 0o755, context: context))
        // Written together with the first change after the store recovered: nothing staged was dropped.
        let restarted = try FolioFileSystem(store: store, cache: cache, logger: Logger(label: "test"))
        XCTAssertNoThrow(try restarted.lookup(parent: 1, name: "staged"))
        XCTAssertNoThrow(try restarted.lookup(parent: 1, name: "d"))
    }

    /// A remote change that replaces a document's content deletes the old version file only once the store no
    /// longer refers to it: when that write fails, the stored row still finds its content (nothing is lost).
    func testAFailedStoreWriteOfARemoteChangeKeepsTheContentTheStoreRefersTo() async throws {
        let store = InMemoryMetadataStore()
        let directory = NSTemporaryDirectory() + "folio-core-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try ContentCache(directory: FilePath(directory))
        let fileSystem = try FolioFileSystem(store: store, cache: cache, logger: Logger(label: "test"))
        let (_, handle) = try fileSystem.createFile(
            parent: 1, name: "doc.txt", permissions: 0o644, flags: O_WRONLY, context: CoreHarness.context())
        _ = try Array("one".utf8).withUnsafeBytes { try fileSystem.write(handle, offset: 0, bytes: $0) }
        try fileSystem.flush(handle, processID: 100)
        try fileSystem.release(handle)
        let work = try XCTUnwrap(fileSystem.nextUploadWork(limit: 4).first)
        guard case .create(let ino, let template, _, _, _) = work else { return XCTFail("expected a create") }
        work.closeContents()
        fileSystem.finishUpload(work, result: .success(CoreHarness.remoteFile(template, size: 3, version: "v1")))
        fileSystem.flushDeferredWrites()
        let file = try XCTUnwrap(fileSystem.node(ino)?.contentFile)
        store.failApplies(with: .noSpace("disk full"))
        XCTAssertThrowsError(try fileSystem.applyEnumeration(
            of: .drive, items: [CoreHarness.remoteFile(template, size: 6, version: "v2")]))
        XCTAssertTrue(FileManager.default.fileExists(atPath: cache.path(of: file).string),
                      "the content the store refers to was deleted before the store was written")
        store.failApplies(with: nil)
        let restarted = try FolioFileSystem(store: store, cache: cache, logger: Logger(label: "test"))
        XCTAssertEqual(restarted.node(ino)?.contentFile, file)
    }

    /// A commit is written with every namespace change staged before it: after a crash (no group write, no
    /// unmount) the store holds the folder, the file in it and its content.
    func testCommitWritesStagedChangesFirst() async throws {
        let core = try CoreHarness()
        _ = try core.fileSystem.makeDirectory(parent: 1, name: "dir", permissions: 0o755, context: CoreHarness.context())
        try await core.write("dir/file", "committed")
        try core.fileSystem.rename(parent: 1, name: "dir", newParent: 1, newName: "renamed", flags: [])
        try await core.write("other", "also committed")
        // A new core over the same files without flushing, as after `kill -9` of the daemon.
        let crashed = try FolioFileSystem(
            store: core.store, cache: try ContentCache(directory: FilePath(core.directory + "/content")),
            logger: Logger(label: "test"))
        let folder = try crashed.lookup(parent: 1, name: "renamed").ino
        XCTAssertThrowsError(try crashed.lookup(parent: 1, name: "dir"))
        let file = try crashed.lookup(parent: folder, name: "file")
        XCTAssertEqual(file.size, 9)
        XCTAssertEqual(crashed.node(file.ino)?.state, .dirty(generation: 2))
        XCTAssertNoThrow(try crashed.lookup(parent: 1, name: "other"))
    }

    /// `fsync` of a folder makes staged changes durable at once.
    func testSynchronizeMetadataWritesStagedChanges() async throws {
        let core = try CoreHarness()
        _ = try core.fileSystem.makeDirectory(parent: 1, name: "dir", permissions: 0o755, context: CoreHarness.context())
        try core.fileSystem.synchronizeMetadata()
        let crashed = try FolioFileSystem(
            store: core.store, cache: try ContentCache(directory: FilePath(core.directory + "/content")),
            logger: Logger(label: "test"))
        XCTAssertNoThrow(try crashed.lookup(parent: 1, name: "dir"))
    }

    func testRefusals() throws {
        let core = try CoreHarness()
        let context = CoreHarness.context()
        XCTAssertThrowsError(try core.fileSystem.link(1, newParent: 1, newName: "x")) {
            XCTAssertEqual(($0 as? FolioError)?.errno, .notPermitted)
        }
        XCTAssertThrowsError(try core.fileSystem.makeNode(parent: 1, name: "dev", kind: nil, permissions: 0o644, context: context)) {
            XCTAssertEqual(($0 as? FolioError)?.errno, .invalidArgument, "a node of no known type")
        }
        _ = try core.fileSystem.makeDirectory(parent: 1, name: "a", permissions: 0o755, context: context)
        _ = try core.fileSystem.makeDirectory(parent: try core.ino("a"), name: "b", permissions: 0o755, context: context)
        XCTAssertThrowsError(try core.fileSystem.rename(parent: 1, name: "a", newParent: try core.ino("a/b"), newName: "c", flags: [])) {
            XCTAssertEqual(($0 as? FolioError)?.errno, .invalidArgument)
        }
        XCTAssertThrowsError(try core.fileSystem.removeDirectory(parent: 1, name: "a")) {
            XCTAssertEqual(($0 as? FolioError)?.errno, .directoryNotEmpty)
        }
        XCTAssertThrowsError(try core.fileSystem.setExtendedAttribute(1, name: "user.folio.state", value: [], mustCreate: false, mustReplace: false)) {
            XCTAssertEqual(($0 as? FolioError)?.errno, .notPermitted)
        }
    }

    /// A poll that listed the provider before one of our uploads landed must not delete the uploaded item
    /// (that race once lost a git object under load).
    func testStaleEnumerationIsIgnored() async throws {
        let core = try CoreHarness()
        try await core.write("fresh.txt", "new")
        let epoch = core.fileSystem.remoteEpoch()
        let work = core.fileSystem.nextUploadWork(limit: 1)
        guard case .create(_, let template, _, _, _) = work.first else { return XCTFail("expected a create") }
        work.forEach { $0.closeContents() }
        core.fileSystem.finishUpload(work[0], result: .success(RemoteItem(
            id: template.id, container: .drive, parentID: nil, name: "fresh.txt", kind: .file, size: 3,
            modificationTime: .now(), mode: 0o644, version: "v1")))
        // The listing was taken at `epoch`, before the create landed: it does not have the file.
        let applied = try core.fileSystem.applyEnumeration(of: .drive, items: [], epoch: epoch)
        XCTAssertFalse(applied)
        XCTAssertEqual(try core.list(""), ["fresh.txt"])
        // A current listing without the file means the remote deleted it: the clean item goes.
        XCTAssertTrue(try core.fileSystem.applyEnumeration(of: .drive, items: [], epoch: core.fileSystem.remoteEpoch()))
        XCTAssertEqual(try core.list(""), [])
    }

    /// A file deleted while its create runs gets a remote delete, which waits for the create and then names
    /// the version it made; a delete of a file whose create answer was lost is tagged as this writer's.
    func testADeleteWaitsForTheCreateOfItsItem() async throws {
        let core = try CoreHarness()
        try await core.write("brief.txt", "draft")
        let work = core.fileSystem.nextUploadWork(limit: 4)
        guard case .create(_, let template, _, _, _) = work.first, work.count == 1 else {
            return XCTFail("expected one create, got \(work.map(\.summary))")
        }
        try core.fileSystem.unlink(parent: 1, name: "brief.txt")
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1, "the delete is queued")
        XCTAssertTrue(core.fileSystem.nextUploadWork(limit: 4).isEmpty, "the delete waits while the create runs")
        work.forEach { $0.closeContents() }
        core.fileSystem.finishUpload(work[0], result: .success(RemoteItem(
            id: template.id, container: .drive, parentID: nil, name: "brief.txt", kind: .file, size: 5,
            modificationTime: .now(), mode: 0o644, version: "v1")))
        let delete = core.fileSystem.nextUploadWork(limit: 4)
        guard case .delete(let tombstone, let retryTag) = delete.first else {
            return XCTFail("expected the delete, got \(delete.map(\.summary))")
        }
        XCTAssertEqual(tombstone.itemID, template.id)
        XCTAssertEqual(tombstone.remoteVersion, "v1", "the version the create made")
        XCTAssertTrue(retryTag.hasSuffix("@v1"), retryTag)

        // A create whose answer is lost, then a delete: not conditional on a version, but tagged.
        try await core.write("memo.txt", "draft")
        let memo = core.fileSystem.nextUploadWork(limit: 4)
        guard case .create(_, let memoTemplate, _, _, _) = memo.first else { return XCTFail("expected a create") }
        memo.forEach { $0.closeContents() }
        core.fileSystem.finishUpload(memo[0], result: .failure(.providerFailure("reply lost", retryable: true)))
        try core.fileSystem.unlink(parent: 1, name: "memo.txt")
        let memoDelete = core.fileSystem.nextUploadWork(limit: 4)
        guard case .delete(let memoTombstone, let memoTag) = memoDelete.first(where: {
            if case .delete(let tombstone, _) = $0 { return tombstone.itemID == memoTemplate.id }
            return false
        }) else { return XCTFail("expected a delete of the memo, got \(memoDelete.map(\.summary))") }
        XCTAssertNil(memoTombstone.remoteVersion)
        XCTAssertEqual(memoTag, memoTemplate.retryTag, "the tag the create carried")
    }

    /// New content on the remote while only a chmod of ours waits: the content is taken (the file becomes a
    /// placeholder of the new version) and the chmod stays, to be sent.
    func testARemoteContentChangeIsTakenWhileOnlyAMetadataChangeWaits() async throws {
        let core = try CoreHarness()
        try await core.write("notes.txt", "ours")
        let work = core.fileSystem.nextUploadWork(limit: 4)
        let template = try XCTUnwrap(core.completeCreate(work[0], version: "v1"))
        let ino = try core.ino("notes.txt")
        XCTAssertEqual(core.fileSystem.node(ino)?.state, .materialized)
        _ = try core.fileSystem.setAttributesNow(ino, AttributeChanges(permissions: 0o600), handle: nil)
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1)
        let theirs = RemoteItem(
            id: template.id, container: .drive, parentID: nil, name: "notes.txt", kind: .file, size: 6,
            modificationTime: .now(), mode: 0o644, version: "v2")
        XCTAssertTrue(try core.fileSystem.applyEnumeration(of: .drive, items: [theirs]))
        let node = try XCTUnwrap(core.fileSystem.node(ino))
        XCTAssertEqual(node.state, .placeholder, "their content is taken")
        XCTAssertEqual(node.remoteVersion, "v2")
        XCTAssertEqual(node.size, 6)
        XCTAssertEqual(node.mode, 0o600, "our chmod stays")
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1, "and is still to be sent")
    }

    /// An upload's outcome is written with the next group write; lost in a crash, the upload is made again from
    /// the same base with the same retry tag (which the provider recognizes), and the remote version it made is
    /// not taken for someone else's change meanwhile.
    func testAnUploadOutcomeLostInACrashIsMadeAgainWithItsTag() async throws {
        let core = try CoreHarness(groupWriteDelay: .seconds(3600))
        let template = try await core.uploadedDocument("doc.txt", "one")
        try await core.write("doc.txt", "two")
        let work = core.fileSystem.nextUploadWork(limit: 4)
        guard case .modify(_, _, _, let base, let changes, _, _, _) = try XCTUnwrap(work.first) else {
            return XCTFail("expected a modify, got \(work.map(\.summary))")
        }
        XCTAssertEqual(base, "v1")
        work[0].closeContents()
        let landed = CoreHarness.remoteFile(template, size: 3, version: "v2")
        core.fileSystem.finishUpload(work[0], result: .success(landed))
        let ino = try core.ino("doc.txt")
        XCTAssertEqual(core.fileSystem.node(ino)?.state, .materialized)
        try core.crashAndRestart()
        guard case .dirty = core.fileSystem.node(ino)?.state else {
            let state = String(describing: core.fileSystem.node(ino)?.state)
            return XCTFail("the outcome was written at once: \(state)")
        }
        // The remote already shows the upload's version: ours, maybe, so not a conflict.
        XCTAssertTrue(try core.fileSystem.applyEnumeration(of: .drive, items: [landed]))
        XCTAssertNotEqual(core.fileSystem.node(ino)?.state, .conflicted)
        let again = core.fileSystem.nextUploadWork(limit: 4)
        guard case .modify(_, _, _, let retriedBase, let retried, _, _, _) = try XCTUnwrap(again.first) else {
            return XCTFail("expected the modify again, got \(again.map(\.summary))")
        }
        again.forEach { $0.closeContents() }
        XCTAssertEqual(retriedBase, "v1")
        XCTAssertEqual(retried.retryTag, changes.retryTag)
    }

    /// The same for a metadata change alone (a `touch`): after the crash our own new version on the remote does
    /// not replace the local content (the file would become a placeholder of what it already has).
    func testAMetadataOutcomeLostInACrashKeepsTheContent() async throws {
        let core = try CoreHarness(groupWriteDelay: .seconds(3600))
        let template = try await core.uploadedDocument("doc.txt", "one")
        let ino = try core.ino("doc.txt")
        let time = Timestamp(seconds: 1_700_000_000, nanoseconds: 5)
        _ = try core.fileSystem.setAttributesNow(ino, AttributeChanges(modificationTime: time), handle: nil)
        core.fileSystem.flushDeferredWrites()
        let work = core.fileSystem.nextUploadWork(limit: 4)
        XCTAssertEqual(work.count, 1)
        work.forEach { $0.closeContents() }
        // The provider's new version of the file: our time, the same size (a `touch` changes the version).
        let touched = CoreHarness.remoteFile(template, size: 3, modificationTime: time, version: "v1b")
        core.fileSystem.finishUpload(work[0], result: .success(touched))
        try core.crashAndRestart()
        XCTAssertTrue(try core.fileSystem.applyEnumeration(of: .drive, items: [touched]))
        XCTAssertEqual(core.fileSystem.node(ino)?.state, .materialized, "our own change was taken for new content")
        let value = try await core.read("doc.txt")
        XCTAssertEqual(value, "one")
        // Someone else's edit meanwhile (another size, another time) is still taken: a later save of ours must
        // not be based on a version whose content we never had.
        let theirs = CoreHarness.remoteFile(template, size: 6, version: "v2")
        XCTAssertTrue(try core.fileSystem.applyEnumeration(of: .drive, items: [theirs]))
        XCTAssertEqual(core.fileSystem.node(ino)?.state, .placeholder, "their content was hidden by our touch")
        XCTAssertEqual(core.fileSystem.node(ino)?.remoteVersion, "v2")
    }

    /// A delete that waited for a move to another container goes to that container.
    func testADeleteAfterAMoveToAnotherContainerFollowsIt() async throws {
        let core = try CoreHarness()
        try await core.write("moving.txt", "x")
        let template = try XCTUnwrap(core.completeCreate(core.fileSystem.nextUploadWork(limit: 4)[0]))
        try core.fileSystem.rename(parent: 1, name: "moving.txt", newParent: 1, newName: "moved.txt", flags: [])
        let move = core.fileSystem.nextUploadWork(limit: 4)
        guard case .modify = move.first else { return XCTFail("expected the move, got \(move.map(\.summary))") }
        try core.fileSystem.unlink(parent: 1, name: "moved.txt")
        move.forEach { $0.closeContents() }
        let elsewhere = ContainerID("com.example.other")
        core.fileSystem.finishUpload(move[0], result: .success(RemoteItem(
            id: template.id, container: elsewhere, parentID: nil, name: "moved.txt", kind: .file, size: 1,
            modificationTime: .now(), mode: 0o644, version: "v2")))
        let delete = core.fileSystem.nextUploadWork(limit: 4)
        guard case .delete(let tombstone, _) = delete.first else { return XCTFail("expected the delete") }
        XCTAssertEqual(tombstone.container, elsewhere)
        XCTAssertEqual(tombstone.remoteVersion, "v2")
    }

    /// An item whose delete is queued is not brought back by a listing that still has it.
    func testPendingDeleteIsNotResurrected() async throws {
        let core = try CoreHarness()
        let item = RemoteItem(
            id: ItemID("remote-1"), container: .drive, parentID: nil, name: "gone.txt", kind: .file, size: 1,
            modificationTime: .now(), mode: 0o644, version: "r1")
        try core.fileSystem.applyEnumeration(of: .drive, items: [item])
        XCTAssertEqual(try core.list(""), ["gone.txt"])
        try core.fileSystem.unlink(parent: 1, name: "gone.txt")
        try core.fileSystem.applyEnumeration(of: .drive, items: [item], epoch: core.fileSystem.remoteEpoch())
        XCTAssertEqual(try core.list(""), [], "the queued delete wins over the stale listing")
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1)
    }
}
