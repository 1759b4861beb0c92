import FolioCore
@testable import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// DESIGN.md §2 "The remote": a remote folder that is missing, replaced by an empty folder or by another remote
/// makes the provider offline, saying why; never an empty enumeration, never `.notFound`. The folder back, the
/// provider works again.
final class RemoteIdentityTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: remote.root.string + "-away")
        remote.remove()
    }

    /// An anchor taken while the remote was there.
    private var anchor: SyncAnchor?

    func testAMissingReplacedOrOtherRemoteFolderIsOfflineUntilItIsBack() async throws {
        let provider = try remote.provider()
        let created = try await provider.createItem(
            remote.template("kept.txt"), contents: try remote.contentFile("kept"))
        XCTAssertNotNil(LocalProvider.remoteID(at: remote.root))
        XCTAssertEqual(LocalProvider.remoteID(at: remote.root), provider.remoteID)
        anchor = try await provider.currentAnchor(in: .drive)
        let root = remote.root.string
        let away = root + "-away"

        try FileManager.default.moveItem(atPath: root, toPath: away)
        try await expectOffline(provider, saying: "is missing")

        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try await expectOffline(provider, saying: "is not the remote any more")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), [], "nothing written into it")

        try FileManager.default.removeItem(atPath: root)
        try LocalProvider.initialize(at: remote.root)  // another remote in its place
        try await expectOffline(provider, saying: "holds another remote")

        try FileManager.default.removeItem(atPath: root)
        try FileManager.default.moveItem(atPath: away, toPath: root)
        let listed = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(listed.map(\.id), [created.id])
        _ = try await provider.modifyItem(
            created.id, in: .drive, baseVersion: created.version, changes: RemoteItemChanges(),
            contents: try remote.contentFile("changed"))
    }

    /// The change journal keeps up with a remote's state folder but never makes one: in an empty folder left where
    /// the remote was (an unmounted share), it fails and writes nothing.
    func testTheChangeJournalIsNeverMadeInAFolderThatIsNotTheRemote() throws {
        let standIn = remote.root.string + "-away"  // removed by tearDown
        try FileManager.default.createDirectory(atPath: standIn, withIntermediateDirectories: false)
        let layout = RemoteLayout.existing(at: FilePath(standIn))
        var journal = ChangeJournal(path: layout.journal(of: .drive))
        XCTAssertThrowsError(try journal.refresh())
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: standIn), [], "nothing written into it")

        // In the remote's own state folder, a missing journal is made.
        var own = ChangeJournal(path: RemoteLayout.existing(at: remote.root).journal(of: ContainerID("com.example")))
        XCTAssertNoThrow(try own.refresh())
    }

    /// Every kind of call fails with `.offline` and the reason.
    private func expectOffline(
        _ provider: LocalProvider, saying reason: String, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let template = remote.template("new.txt")
        let anchor = try XCTUnwrap(anchor)
        let calls: [(String, () async throws -> Void)] = [
            ("list", { _ = try await provider.listContainers() }),
            ("changes", { _ = try await provider.changes(in: .drive, since: anchor) }),
            ("enumerate", { _ = try await provider.enumerateItems(in: .drive) }),
            ("create", { _ = try await provider.createItem(template, contents: nil) }),
            ("delete", { try await provider.deleteItem(.generate(), in: .drive, baseVersion: nil, retryTag: nil) }),
        ]
        for (name, call) in calls {
            do {
                try await call()
                XCTFail("\(name) succeeded", file: file, line: line)
            } catch let error as FolioError {
                guard case .offline(let message) = error else {
                    return XCTFail("\(name): \(error) is not offline", file: file, line: line)
                }
                XCTAssertTrue(message.contains(reason), "\(name): \(message)", file: file, line: line)
            }
        }
        let batch = await provider.createItems([ItemCreation(template, contents: nil)])
        guard case .failure(.offline) = batch.first else {
            return XCTFail("a batch of creates: \(batch)", file: file, line: line)
        }
    }
}
