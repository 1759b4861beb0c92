import FolioCore
import Foundation
import XCTest

/// Pin, evict, download bookkeeping and the cache limit, on the core.
final class ContentManagementTests: XCTestCase {
    /// Remote items (a folder `Docs` with `count` files of `size` bytes each) as placeholders.
    private func remoteTree(_ core: CoreHarness, count: Int, size: Int = 100) throws -> [RemoteItem] {
        var items = [RemoteItem(
            id: ItemID("docs"), container: .drive, parentID: nil, name: "Docs", kind: .directory, size: 0,
            modificationTime: Timestamp(seconds: 1000, nanoseconds: 0), mode: 0o755, version: "d1")]
        for index in 0..<count {
            items.append(RemoteItem(
                id: ItemID("file-\(index)"), container: .drive, parentID: ItemID("docs"), name: "f\(index).txt",
                kind: .file, size: Int64(size),
                modificationTime: Timestamp(seconds: 1000 + Int64(index), nanoseconds: 0),
                mode: 0o644, version: "v1"))
        }
        try core.fileSystem.applyEnumeration(of: .drive, items: items)
        return items
    }

    /// Downloads a placeholder as the materializer would (content from "the provider" = `size` bytes).
    private func materialize(_ core: CoreHarness, _ path: String, _ item: RemoteItem) throws {
        guard let ticket = try core.fileSystem.beginMaterialization(try core.ino(path)) else { return }
        try Data(repeating: 0x61, count: Int(item.size)).write(to: URL(fileURLWithPath: ticket.path.string))
        core.fileSystem.finishMaterialization(ticket, result: .success(item))
    }

    func testEvictTurnsCleanFilesBackIntoPlaceholdersAndRefusesTheOthers() async throws {
        let core = try CoreHarness()
        let items = try remoteTree(core, count: 3)
        for index in 0..<3 { try materialize(core, "Docs/f\(index).txt", items[index + 1]) }
        XCTAssertEqual(core.fileSystem.cachedBytes(), 300)
        let first = try core.ino("Docs/f0.txt")
        let report = try core.fileSystem.evict(first)
        XCTAssertEqual(report.evicted, 1)
        XCTAssertEqual(report.freedBytes, 100)
        XCTAssertEqual(core.fileSystem.node(first)?.state, .placeholder)
        XCTAssertNil(core.fileSystem.node(first)?.contentFile)
        XCTAssertEqual(core.fileSystem.cachedBytes(), 200)

        // A changed file, a pinned one and an open one are refused, each with its reason.
        try await core.write("Docs/f1.txt", "local change")
        XCTAssertThrowsError(try core.fileSystem.evict(try core.ino("Docs/f1.txt"))) {
            XCTAssertEqual($0 as? FolioError, .busy("f1.txt has changes not uploaded yet; not evicted"))
        }
        try core.fileSystem.setPinned(try core.ino("Docs/f2.txt"), true)
        XCTAssertThrowsError(try core.fileSystem.evict(try core.ino("Docs/f2.txt"))) {
            XCTAssertEqual($0 as? FolioError, .busy("f2.txt is pinned (unpin it first); not evicted"))
        }
        try core.fileSystem.setPinned(try core.ino("Docs/f2.txt"), false)
        let reader = try await core.fileSystem.open(
            try core.ino("Docs/f2.txt"), flags: O_RDONLY, context: CoreHarness.context())
        XCTAssertThrowsError(try core.fileSystem.evict(try core.ino("Docs/f2.txt"))) {
            XCTAssertEqual($0 as? FolioError, .busy("f2.txt is open; not evicted"))
        }
        // A folder: what can go goes, the rest is listed.
        let folderReport = try core.fileSystem.evict(try core.ino("Docs"))
        XCTAssertEqual(folderReport.evicted, 0)
        XCTAssertEqual(folderReport.skipped.sorted(), ["f1.txt: has changes not uploaded yet", "f2.txt: is open"])
        try core.fileSystem.release(reader.handle)
        XCTAssertEqual(try core.fileSystem.evict(try core.ino("Docs")).evicted, 1)
        XCTAssertEqual(core.fileSystem.node(try core.ino("Docs/f2.txt"))?.state, .placeholder)
        let kept = try await core.read("Docs/f1.txt")
        XCTAssertEqual(kept, "local change", "nothing local was lost")
        try core.remount()
        XCTAssertEqual(core.fileSystem.node(first)?.state, .placeholder, "evictions are stored")
    }

    func testPinningAFolderPinsWhatIsInItAndWhatComesLater() async throws {
        let core = try CoreHarness()
        _ = try remoteTree(core, count: 2)
        let docs = try core.ino("Docs")
        XCTAssertEqual(try core.fileSystem.setPinned(docs, true), 3)
        XCTAssertEqual(
            Set(core.fileSystem.pinnedPlaceholders()), [try core.ino("Docs/f0.txt"), try core.ino("Docs/f1.txt")])
        try await core.write("Docs/local.txt", "made here")
        XCTAssertEqual(core.fileSystem.node(try core.ino("Docs/local.txt"))?.pinned, true, "local creates inherit")
        _ = try remoteTree(core, count: 3)
        XCTAssertEqual(core.fileSystem.node(try core.ino("Docs/f2.txt"))?.pinned, true, "remote additions inherit")
        XCTAssertEqual(
            String(
                decoding: try core.fileSystem.extendedAttribute(try core.ino("Docs/f2.txt"), name: "user.folio.pinned"),
                as: UTF8.self),
            "1")
        try core.fileSystem.setExtendedAttribute(
            docs, name: "user.folio.pinned", value: Array("0".utf8), mustCreate: false, mustReplace: false)
        XCTAssertEqual(core.fileSystem.pinnedPlaceholders(), [], "unpinning through the xattr is recursive too")
        XCTAssertThrowsError(try core.fileSystem.setExtendedAttribute(
            docs, name: "user.folio.pinned", value: Array("yes".utf8), mustCreate: false, mustReplace: false)) {
            XCTAssertEqual($0 as? FolioError, .invalidArgument("user.folio.pinned takes 1 or 0"))
        }
    }

    func testCacheLimitEvictsLeastRecentlyUsedCleanFilesOnly() async throws {
        let core = try CoreHarness()
        let items = try remoteTree(core, count: 6)
        for index in 0..<6 { try materialize(core, "Docs/f\(index).txt", items[index + 1]) }
        // Use order: f3 and f4 recently opened; f0 pinned; f1 dirty; f5 open.
        try core.fileSystem.setPinned(try core.ino("Docs/f0.txt"), true)
        try await core.write("Docs/f1.txt", String(repeating: "b", count: 100))
        for name in ["f3.txt", "f4.txt"] { _ = try await core.read("Docs/\(name)") }
        let open = try await core.fileSystem.open(
            try core.ino("Docs/f5.txt"), flags: O_RDONLY, context: CoreHarness.context())
        XCTAssertEqual(core.fileSystem.cachedBytes(), 600)

        let report = core.fileSystem.enforceCacheLimit(450)
        XCTAssertEqual(report.evicted, 2, "f2 (never used), then f3 (used before f4)")
        XCTAssertEqual(core.fileSystem.node(try core.ino("Docs/f2.txt"))?.state, .placeholder)
        XCTAssertEqual(core.fileSystem.node(try core.ino("Docs/f3.txt"))?.state, .placeholder)
        XCTAssertEqual(core.fileSystem.node(try core.ino("Docs/f4.txt"))?.state, .materialized)

        XCTAssertEqual(core.fileSystem.enforceCacheLimit(0).evicted, 1, "only f4 is left to evict")
        for name in ["f0.txt", "f1.txt", "f5.txt"] {
            XCTAssertNotEqual(core.fileSystem.node(try core.ino("Docs/\(name)"))?.state, .placeholder, name)
        }
        XCTAssertEqual(try core.read(handle: open.handle), String(repeating: "a", count: 100))
        try core.fileSystem.release(open.handle)
    }
}
