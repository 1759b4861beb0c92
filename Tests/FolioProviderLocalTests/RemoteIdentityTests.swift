import FolioCore
import FolioProviderLocal
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

    func testAMissingReplacedOrOtherRemoteFolderIsOfflineUntilItIsBack() async throws {
        let provider = try remote.provider()
        let created = try await provider.createItem(
            remote.template("kept.txt"), contents: try remote.contentFile("kept"))
        XCTAssertNotNil(LocalProvider.remoteID(at: remote.root))
        XCTAssertEqual(LocalProvider.remoteID(at: remote.root), provider.remoteID)
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

    /// Every kind of call fails with `.offline` and the reason.
    private func expectOffline(
        _ provider: LocalProvider, saying reason: String, file: StaticString = #filePath, line: UInt = #line
    ) async throws {
        let template = remote.template("new.txt")
        let calls: [(String, () async throws -> Void)] = [
            ("list", { _ = try await provider.listContainers() }),
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
