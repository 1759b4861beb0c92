import FolioCore
@testable import FolioProviderLocal
import Foundation
import Glibc
import SystemPackage
import XCTest

/// The remote's lock (``RemoteLock``) and the identity check made under it: what a review of the cross-process
/// lock found.
final class RemoteLockTests: XCTestCase {
    private var remote: TemporaryRemote!
    private var extraFolders: [String] = []

    override func setUpWithError() throws {
        remote = try TemporaryRemote()
    }

    override func tearDownWithError() throws {
        remote.remove()
        for folder in extraFolders { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// A folder removed after the test.
    private func temporaryFolder() throws -> String {
        let path = NSTemporaryDirectory() + "folio-lock-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        extraFolders.append(path)
        return path
    }

    /// The remote folder is replaced by another remote while a create stages its content (after the call's
    /// first look at the folder): the create is offline and nothing lands in the other remote.
    func testACreateNeverLandsInAnotherRemoteSwappedInWhileItStaged() async throws {
        let provider = try remote.provider()
        _ = try await provider.enumerateItems(in: .drive)
        let scratch = try temporaryFolder()
        let other = scratch + "/other"
        let away = scratch + "/away"
        try LocalProvider.initialize(at: FilePath(other))
        // The content comes through a FIFO: the create's staging waits in its open until the test opens the
        // other end, so the test knows the create is staging when it swaps the folders.
        let fifo = scratch + "/content"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let template = RemoteItemTemplate(
            id: .generate(), container: .drive, parentID: nil, name: "new.txt", kind: .file,
            modificationTime: .now(), mode: 0o644)
        let create = Task { try await provider.createItem(template, contents: FilePath(fifo)) }
        var writer: Int32 = -1
        let deadline = Date().addingTimeInterval(30)
        while writer < 0, Date() < deadline {
            writer = open(fifo, O_WRONLY | O_NONBLOCK)  // ENXIO until the create opens it for reading
            if writer < 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        XCTAssertGreaterThanOrEqual(writer, 0, "the create never opened its content")
        XCTAssertEqual(rename(remote.root.string, away), 0)
        XCTAssertEqual(rename(other, remote.root.string), 0)
        close(writer)
        do {
            let item = try await create.value
            XCTFail("the create succeeded (\(item)) in a remote that is not this provider's")
        } catch FolioError.offline(let reason) {
            // (The swap is two renames: a check that falls between them finds no remote at all. Refused either way.)
            XCTAssertTrue(reason.contains("another remote") || reason.contains("is missing"), reason)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: remote.path("new.txt")), "landed in the other remote")
        XCTAssertFalse(FileManager.default.fileExists(atPath: away + "/com.folio.drive/new.txt"))
        // The real remote back: the same create lands there.
        XCTAssertEqual(rename(remote.root.string, other), 0)
        XCTAssertEqual(rename(away, remote.root.string), 0)
        let empty = scratch + "/empty"
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        let created = try await provider.createItem(template, contents: FilePath(empty))
        XCTAssertEqual(created.name, "new.txt")
        XCTAssertTrue(FileManager.default.fileExists(atPath: remote.path("new.txt")))
    }

    /// A remote this process cannot write (a share mounted read-only) is listed and read without its lock; a
    /// change to it fails at once with a clear error, never a hang.
    func testAReadOnlyRemoteIsListedAndReadWithoutTheLock() async throws {
        try remote.writeByHand("hello", to: "a.txt")
        // Written by hand before any provider ran: the lock file does not exist yet and cannot be made.
        let readOnly = try temporaryFolder()
        XCTAssertEqual(system("mount --bind '\(remote.root.string)' '\(readOnly)'"), 0)
        defer { _ = system("umount '\(readOnly)'") }
        XCTAssertEqual(system("mount -o remount,bind,ro '\(readOnly)'"), 0)
        let provider = try LocalProvider(root: FilePath(readOnly))
        let items = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(items.map(\.name), ["a.txt"])
        let destination = try temporaryFolder() + "/fetched"
        _ = try await provider.fetchContents(
            of: items[0].id, in: .drive, version: items[0].version, to: FilePath(destination), progress: { _ in })
        XCTAssertEqual(try String(contentsOfFile: destination, encoding: .utf8), "hello")
        do {
            _ = try await provider.modifyItem(
                items[0].id, in: .drive, baseVersion: items[0].version, changes: RemoteItemChanges(name: "b.txt"),
                contents: nil)
            XCTFail("a rename on a read-only remote succeeded")
        } catch let error as FolioError {
            XCTAssertEqual(error.errno, .readOnlyFileSystem, "\(error)")
        }
    }

    /// Another process (here: another open file description) that keeps the lock past the patience makes the
    /// call `.busy`, which the uploader retries; once it lets go, the call goes through.
    func testALockHeldTooLongIsBusyNotAHang() throws {
        let layout = RemoteLayout(root: remote.root)
        let lock = RemoteLock(layout: layout, patience: .milliseconds(200))
        XCTAssertEqual(try lock.withExclusiveLock { 1 }, 1)  // makes the file
        let holder = try FileDescriptor.open(lock.path, .readOnly)
        defer { try? holder.close() }
        XCTAssertTrue(try SystemCalls.tryExclusiveLock(holder, path: lock.path))
        XCTAssertThrowsError(try lock.withExclusiveLock { 1 }) { error in
            guard case FolioError.busy = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(flock(holder.rawValue, LOCK_UN), 0)
        XCTAssertEqual(try lock.withExclusiveLock { 2 }, 2)
    }

    /// The lock file is readable by everyone, whatever the umask: users sharing a remote share its lock.
    func testTheLockFileIsReadableByOtherUsers() throws {
        let old = umask(0o077)
        defer { umask(old) }
        let lock = RemoteLock(layout: RemoteLayout(root: remote.root))
        try? FileManager.default.removeItem(atPath: lock.path.string)
        _ = try lock.withExclusiveLock { 0 }
        let mode = try SystemCalls.status(lock.path).permissions & 0o777
        XCTAssertEqual(mode & 0o444, 0o444, String(mode, radix: 8))
    }
}
