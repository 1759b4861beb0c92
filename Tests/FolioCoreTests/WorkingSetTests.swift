@testable import FolioCore
import FolioStore
import FolioTesting
import Foundation
import Logging
import SystemPackage
import XCTest

/// A state opened on its working set (``FileSystemConfiguration/loadsOnDemand``, what the daemon does): only
/// folders and nodes with something in progress are read before the mount answers; plain files at rest are read
/// with their folder when it is first needed. Every operation must see them as if everything had been read.
final class WorkingSetTests: XCTestCase {
    /// The remote as the tests start it: folders A (a1…a20) and B (b1…b10, and folder B/C with c1), every folder
    /// listed, every file a placeholder.
    private var listings: [(path: String, items: [RemoteItem])] {
        [
            ("", [listedFolder("A", "A"), listedFolder("B", "B"), listedFile("top", "top.txt")]),
            ("A", (1...20).map { listedFile("a\($0)", in: ItemID("A"), "a\($0)") }),
            ("B", (1...10).map { listedFile("b\($0)", in: ItemID("B"), "b\($0)") } + [listedFolder("C", in: ItemID("B"), "C")]),
            ("B/C", [listedFile("c1", in: ItemID("C"), "c1")]),
        ]
    }

    /// A harness reading on demand whose store holds the tree of ``listings``, reopened (as a daemon's restart):
    /// only folders are in memory. Returns it with every path's inode before the restart.
    private func reopenedTree() async throws -> (CoreHarness, [String: UInt64]) {
        let core = try CoreHarness(loadsOnDemand: true)
        for (path, items) in listings {
            XCTAssertTrue(try core.fileSystem.applyFolderListing(try core.ino(path), items: items))
        }
        var inos: [String: UInt64] = [:]
        for (path, items) in listings {
            for item in items { inos[path.isEmpty ? item.name : path + "/" + item.name] = try core.ino(
                path.isEmpty ? item.name : path + "/" + item.name) }
        }
        try core.remount()
        return (core, inos)
    }

    func testAReopenedStateReadsOnlyFoldersAndReadsAFolderWhenItIsFirstNeeded() async throws {
        let (core, inos) = try await reopenedTree()
        let fs = core.fileSystem
        XCTAssertFalse(fs.isFullyLoaded)
        XCTAssertNotNil(fs.node(inos["B/C"]!), "folders are in the working set")
        XCTAssertNil(fs.node(inos["A/a1"]!), "a plain file at rest is read with its folder")
        XCTAssertNil(fs.node(inos["top.txt"]!))

        XCTAssertEqual(try core.list("A"), (1...20).map { "a\($0)" }.sorted())
        XCTAssertEqual(try core.ino("A/a7"), inos["A/a7"], "a file read later keeps its inode")
        XCTAssertEqual(try fs.lookup(parent: FolioFileSystem.rootIno, name: "top.txt").ino, inos["top.txt"])
        XCTAssertNil(fs.node(inos["B/b1"]!), "B is still not read")

        XCTAssertTrue(try fs.loadStoredFolders(count: 100))
        XCTAssertTrue(fs.isFullyLoaded)
        for (path, ino) in inos { XCTAssertEqual(try core.ino(path), ino, path) }
    }

    func testAFolderWhoseChildrenAreNotReadIsNotEmpty() async throws {
        let (core, _) = try await reopenedTree()
        let fs = core.fileSystem
        XCTAssertThrowsError(try fs.removeDirectory(parent: try core.ino("B"), name: "C")) { error in
            XCTAssertEqual(error as? FolioError, .notEmpty("C"))
        }
        _ = try fs.makeDirectory(parent: FolioFileSystem.rootIno, name: "E", permissions: 0o755, context: .internalRequest)
        let bFolder = try core.ino("B")
        XCTAssertThrowsError(try fs.rename(
            parent: FolioFileSystem.rootIno, name: "E", newParent: bFolder, newName: "C", flags: [])) { error in
            XCTAssertEqual(error as? FolioError, .notEmpty("C"))
        }
        XCTAssertEqual(try core.list("B/C"), ["c1"])
        XCTAssertThrowsError(try fs.makeDirectory(
            parent: try core.ino("A"), name: "a3", permissions: 0o755, context: .internalRequest)) { error in
            XCTAssertEqual(error as? FolioError, .exists("a3"), "a name a file not read yet has is taken")
        }
    }

    func testAPathAndAnIDReachAFileNotReadYet() async throws {
        let (core, inos) = try await reopenedTree()
        XCTAssertEqual(try core.fileSystem.resolve(path: "B/C/c1"), inos["B/C/c1"])
        XCTAssertEqual(core.fileSystem.ino(of: ItemID("b4")), inos["B/b4"])
        XCTAssertEqual(try core.fileSystem.locations(of: ItemID("a9"), in: .full), ["A/a9"])
        XCTAssertEqual(core.fileSystem.item(named: "a2", inFolder: ItemID("A")), ItemID("a2"))
    }

    /// A listing of a folder that names an item the store has in another folder not read yet (moved on the
    /// remote): the item moves, keeping its inode, and is never in two places, also after a restart.
    func testAListingNamingAnItemStoredElsewhereMovesThatItem() async throws {
        let (core, inos) = try await reopenedTree()
        var items = listings[1].items
        items.append(listedFile("b2", in: ItemID("A"), "moved-b2"))
        XCTAssertTrue(try core.fileSystem.applyFolderListing(try core.ino("A"), items: items))
        XCTAssertEqual(try core.ino("A/moved-b2"), inos["B/b2"])
        XCTAssertFalse(try core.list("B").contains("b2"))
        XCTAssertTrue(try core.fileSystem.loadStoredFolders(count: 100))
        XCTAssertFalse(try core.list("B").contains("b2"))
        try core.remount()
        XCTAssertEqual(try core.ino("A/moved-b2"), inos["B/b2"])
        XCTAssertFalse(try core.list("B").contains("b2"), "not back in its old folder")
    }

    /// A change set that deletes or changes items not read yet, and a new item taking the name of one not read yet.
    func testAChangeSetReachesItemsNotReadYet() async throws {
        let (core, inos) = try await reopenedTree()
        let fs = core.fileSystem
        let changes = RemoteChanges(
            updated: [listedFile("a5", in: ItemID("A"), "a5", version: "v2"), listedFile("b3", in: ItemID("B"), "b3-renamed"),
                      listedFile("new", in: ItemID("B"), "b4")],
            deleted: [ItemID("b4"), ItemID("C")], anchor: SyncAnchor("x1"))
        XCTAssertTrue(try fs.applyChanges(changes, in: .drive))
        XCTAssertEqual(fs.node(try core.ino("A/a5"))?.remoteVersion, "v2")
        XCTAssertEqual(try core.ino("A/a5"), inos["A/a5"])
        XCTAssertEqual(try core.ino("B/b3-renamed"), inos["B/b3"])
        // (An item deleted and a new one at its name in one change set is a save on the remote: one node.)
        XCTAssertEqual(try core.ino("B/b4"), inos["B/b4"])
        XCTAssertEqual(fs.node(try core.ino("B/b4"))?.itemID, ItemID("new"))
        XCTAssertFalse(try core.list("B").contains("C"))
        XCTAssertEqual(try core.store.loadChildren(of: inos["B/C"]!), [], "a deleted folder's stored children go")
        try core.remount()
        XCTAssertTrue(try core.fileSystem.loadStoredFolders(count: 100))
        XCTAssertEqual(try core.list("B"), ["b1", "b10", "b2", "b3-renamed", "b4", "b5", "b6", "b7", "b8", "b9"])
        XCTAssertEqual(core.fileSystem.node(try core.ino("B/b4"))?.itemID, ItemID("new"))
    }

    /// A change set that only deletes an item not read yet (its folder named by nothing else).
    func testADeleteOfAnItemNotReadYetIsTaken() async throws {
        let (core, _) = try await reopenedTree()
        let changes = RemoteChanges(updated: [], deleted: [ItemID("top")], anchor: SyncAnchor("x1"))
        XCTAssertTrue(try core.fileSystem.applyChanges(changes, in: .drive))
        XCTAssertTrue(try core.fileSystem.loadStoredFolders(count: 100))
        XCTAssertEqual(try core.list(""), ["A", "B"])
        try core.remount()
        XCTAssertEqual(try core.list(""), ["A", "B"])
    }

    /// A document's content, downloaded before the restart, is not collected while its folder is not read.
    func testTheContentOfAFileNotReadYetIsKept() async throws {
        let core = try CoreHarness(loadsOnDemand: true)
        _ = try core.fileSystem.makeDirectory(
            parent: FolioFileSystem.rootIno, name: "D", permissions: 0o755, context: .internalRequest)
        let folderWork = try XCTUnwrap(core.fileSystem.nextUploadWork(limit: 4).first)
        core.completeCreate(folderWork, version: "d1")
        try await core.write("D/doc.txt", "kept bytes")
        let work = try XCTUnwrap(core.fileSystem.nextUploadWork(limit: 4).first)
        core.completeCreate(work)
        let doc = try core.ino("D/doc.txt")
        XCTAssertEqual(core.fileSystem.node(doc)?.state, .materialized)
        try core.remount()
        XCTAssertNil(core.fileSystem.node(doc), "a clean document is read with its folder")
        let content = try await core.read("D/doc.txt")
        XCTAssertEqual(content, "kept bytes")
        XCTAssertEqual(core.fileSystem.node(doc)?.state, .materialized)
    }

    /// A harness reading on demand, reopened, whose store holds folder D (with D/doc.txt and folder D/E with
    /// D/E/deep.txt), all uploaded and their content downloaded: only the folders are in memory. Returns it with
    /// the two files' content files (in the cache folder given) and D's id and inode.
    private func downloadedFolderTree(pinningDoc: Bool = false) async throws -> (
        core: CoreHarness, files: [String], cache: String, folder: ItemID, folderIno: UInt64
    ) {
        let core = try CoreHarness(loadsOnDemand: true)
        _ = try core.fileSystem.makeDirectory(
            parent: FolioFileSystem.rootIno, name: "D", permissions: 0o755, context: .internalRequest)
        _ = try core.fileSystem.makeDirectory(
            parent: try core.ino("D"), name: "E", permissions: 0o755, context: .internalRequest)
        for path in ["D/doc.txt", "D/E/deep.txt"] { try await core.write(path, "bytes of \(path)") }
        for _ in 0..<8 {  // (a folder's time, changed by what was made in it, follows its create)
            guard let work = core.fileSystem.nextUploadWork(limit: 1).first else { break }
            guard case .modify(let ino, let id, let container, _, _, _, _, _) = work else {
                XCTAssertNotNil(core.completeCreate(work))
                continue
            }
            let node = try XCTUnwrap(core.fileSystem.node(ino))
            core.fileSystem.finishUpload(work, result: .success(RemoteItem(
                id: id, container: container,
                parentID: node.parent == FolioFileSystem.rootIno ? nil : core.fileSystem.node(node.parent)?.itemID,
                name: node.name, kind: node.kind, size: 0, modificationTime: .now(), mode: node.mode, version: "m")))
        }
        core.fileSystem.flushDeferredWrites()
        var files: [String] = []
        for path in ["D/doc.txt", "D/E/deep.txt"] {
            let node = try XCTUnwrap(core.fileSystem.node(try core.ino(path)))
            XCTAssertEqual(node.state, .materialized, path)
            files.append(try XCTUnwrap(node.contentFile))
        }
        let folderIno = try core.ino("D")
        let folder = try XCTUnwrap(core.fileSystem.node(folderIno)).itemID
        let cache = core.directory + "/content/"
        for file in files { XCTAssertTrue(FileManager.default.fileExists(atPath: cache + file)) }
        if pinningDoc { _ = try core.fileSystem.setPinned(try core.ino("D/doc.txt"), true) }
        try core.remount()
        let doc = try XCTUnwrap(core.store.loadChildren(of: folderIno).first { $0.kind == .file })
        XCTAssertEqual(core.fileSystem.node(doc.ino) != nil, pinningDoc, "a file at rest is read with its folder")
        return (core, files, cache, folder, folderIno)
    }

    /// A folder deleted on the remote (by a change set, an item taken again, or its parent's listing) before its
    /// stored files were read takes their downloaded content with it: nothing is left in the cache that no node
    /// names (only the next start's garbage collection would find it).
    func testAFolderDeletedBeforeItsFilesAreReadTakesTheirContentWithIt() async throws {
        for way in ["change set", "taken again", "listing"] {
            let (core, files, cache, folder, _) = try await downloadedFolderTree()
            switch way {
            case "change set":
                let changes = RemoteChanges(updated: [], deleted: [folder], anchor: SyncAnchor("x1"))
                XCTAssertTrue(try core.fileSystem.applyChanges(changes, in: .drive))
            case "taken again":
                XCTAssertTrue(try core.fileSystem.applyItemTakenAgain(nil, id: folder, in: .drive))
            default:
                XCTAssertTrue(try core.fileSystem.applyFolderListing(FolioFileSystem.rootIno, items: []))
            }
            XCTAssertEqual(try core.list(""), [], way)
            core.fileSystem.flushDeferredWrites()  // (the files go with the group write after the merge's)
            for file in files {
                XCTAssertFalse(FileManager.default.fileExists(atPath: cache + file), "\(way): \(file) left in the cache")
            }
        }
    }

    /// A file memory has (pinned: in the working set) that the change set deleting its folder moves out keeps
    /// its content; the unread file of a folder inside goes.
    func testAFileMovedOutOfAFolderDeletedInTheSameChangeSetKeepsItsContent() async throws {
        let (core, files, cache, folder, folderIno) = try await downloadedFolderTree(pinningDoc: true)
        let doc = try XCTUnwrap(core.store.loadChildren(of: folderIno).first { $0.kind == .file })
        let moved = RemoteItem(
            id: doc.itemID, container: .drive, parentID: nil, name: "doc.txt", kind: .file, size: doc.size,
            modificationTime: doc.modificationTime, mode: doc.mode, version: try XCTUnwrap(doc.remoteVersion))
        let folderNode = try XCTUnwrap(core.fileSystem.node(folderIno))
        XCTAssertTrue(try core.fileSystem.applyFolderListing(FolioFileSystem.rootIno, items: [RemoteItem(
            id: folder, container: .drive, parentID: nil, name: "D", kind: .directory, size: 0,
            modificationTime: folderNode.modificationTime, mode: folderNode.mode,
            version: try XCTUnwrap(folderNode.remoteVersion))]))  // (the root listed: a file may move there)
        let changes = RemoteChanges(updated: [moved], deleted: [folder], anchor: SyncAnchor("x1"))
        XCTAssertTrue(try core.fileSystem.applyChanges(changes, in: .drive))
        core.fileSystem.flushDeferredWrites()
        XCTAssertEqual(try core.list(""), ["doc.txt"])
        XCTAssertEqual(try core.ino("doc.txt"), doc.ino)
        XCTAssertTrue(FileManager.default.fileExists(atPath: cache + files[0]), "the moved file keeps its content")
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache + files[1]), "D/E/deep.txt's content goes")
        let content = try await core.read("doc.txt")
        XCTAssertEqual(content, "bytes of D/doc.txt")
    }

    /// The same when the store cannot read the removed folder's children (a disk error): the merge still goes
    /// through, and what could not be read is left to the next start's garbage collection.
    func testAFolderWhoseChildrenCannotBeReadIsRemovedAndItsContentCollectedAtTheNextStart() async throws {
        let (core, files, cache, folder, folderIno) = try await downloadedFolderTree()
        let store = ChildrenUnreadable(core.store, folder: folderIno)
        let fileSystem = try FolioFileSystem(
            store: store, cache: try ContentCache(directory: FilePath(cache)), configuration: core.configuration,
            logger: Logger(label: "test"))
        let changes = RemoteChanges(updated: [], deleted: [folder], anchor: SyncAnchor("x1"))
        XCTAssertTrue(try fileSystem.applyChanges(changes, in: .drive))
        fileSystem.flushDeferredWrites()
        XCTAssertThrowsError(try fileSystem.lookup(parent: FolioFileSystem.rootIno, name: "D"), "D is gone")
        XCTAssertTrue(FileManager.default.fileExists(atPath: cache + files[0]), "D's own file: its row was not read")
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache + files[1]), "E's file: read and removed")
        try core.remount()
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache + files[0]), "collected at the next start")
    }

    /// What waits for upload is in the working set: status and the uploader see it at once.
    func testWhatWaitsForUploadIsReadAtOnce() async throws {
        let (core, inos) = try await reopenedTree()
        try await core.write("A/local.txt", "mine")
        let local = try core.ino("A/local.txt")
        try core.remount()
        XCTAssertNotNil(core.fileSystem.node(local))
        XCTAssertNil(core.fileSystem.node(inos["A/a1"]!))
        XCTAssertEqual(core.fileSystem.pendingUploadCount, 1)
        let status = core.fileSystem.status()
        XCTAssertEqual(status.states["placeholder"], 32, "status counts every item: \(status.states)")
        XCTAssertTrue(core.fileSystem.isFullyLoaded, "status read the rest")
    }

    /// A folder read once is never read again: a node removed meanwhile does not come back from a row whose
    /// removal has not reached the store yet, and a node made in this run is never taken from a row.
    func testTheRuleOfStoredNodes() {
        let folder = Node(
            ino: 2, itemID: ItemID("F"), container: .drive, parent: 1, name: "F", kind: .directory,
            modificationTime: .now(), mode: 0o755, state: .materialized)
        let atStart = Node(
            ino: 3, itemID: ItemID("x"), container: .drive, parent: 2, name: "x", kind: .file,
            modificationTime: .now(), mode: 0o644, state: .dirty(generation: 1))
        var stored = StoredNodes(workingSet: [folder, atStart], firstNewIno: 10)
        XCTAssertFalse(stored.isComplete)
        XCTAssertTrue(stored.take(2))
        XCTAssertFalse(stored.take(2), "a folder is read once")
        XCTAssertFalse(stored.admits(atStart), "a node read at start is memory's")
        var made = atStart
        made.ino = 10
        XCTAssertFalse(stored.admits(made), "a node made in this run is memory's")
        var rest = atStart
        rest.ino = 4
        XCTAssertTrue(stored.admits(rest))
        stored.releaseIfComplete()
        XCTAssertTrue(stored.isComplete)
        XCTAssertNil(stored.next)
    }
}

/// A store whose children of one folder cannot be read (as a disk error would have it); everything else is the
/// store it wraps.
private final class ChildrenUnreadable: MetadataStore {
    private let base: any MetadataStore
    private let folder: UInt64

    init(_ base: any MetadataStore, folder: UInt64) {
        self.base = base
        self.folder = folder
    }

    func load() throws(FolioError) -> StoreSnapshot { try base.load() }
    func apply(_ batch: StoreBatch, durable: Bool) throws(FolioError) { try base.apply(batch, durable: durable) }
    func loadWorkingSet() throws(FolioError) -> StoreSnapshot { try base.loadWorkingSet() }
    func folders(holding items: [ItemID]) throws(FolioError) -> Set<UInt64> { try base.folders(holding: items) }
    func contentFiles() throws(FolioError) -> Set<String> { try base.contentFiles() }

    func loadChildren(of folder: UInt64) throws(FolioError) -> [Node] {
        if folder == self.folder { throw .io("the store's disk failed (test)") }
        return try base.loadChildren(of: folder)
    }
}
