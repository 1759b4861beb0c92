import FolioCore
import FolioSync
import FolioTesting
import Logging
import Synchronization
import SystemPackage
import XCTest

/// A remote in memory that lists folders, answers changes since an anchor, and can be told the anchor expired.
private final class ScriptedRemote: UploadOnlyProvider {
    struct Contents {
        var items: [ItemID: RemoteItem] = [:]
        var anchor = 1
        var anchorExpired = false
        var offline = false
        var changes: [RemoteChanges] = []
    }

    let contents = Mutex(Contents())

    func put(_ item: RemoteItem) { contents.withLock { $0.items[item.id] = item } }

    func remove(_ id: ItemID) { _ = contents.withLock { $0.items.removeValue(forKey: id) } }

    func currentAnchor(in container: ContainerID) async throws -> SyncAnchor {
        SyncAnchor("a\(contents.withLock { $0.anchor })")
    }

    func enumerateFolder(
        _ folder: ItemID?, in container: ContainerID, from cursor: PageCursor?, pageSize: Int
    ) async throws -> FolderPage {
        let parent = folder == ItemID.root(of: container) ? nil : folder
        if contents.withLock({ $0.offline }) { throw FolioError.offline("unplugged") }
        let items = contents.withLock { $0.items.values.filter { $0.parentID == parent } }
        return FolderPage(items: items.sorted { $0.name < $1.name }, next: nil)
    }

    func changes(in container: ContainerID, since anchor: SyncAnchor) async throws -> RemoteChanges {
        try contents.withLock { contents in
            if contents.anchorExpired { throw FolioError.anchorExpired("history trimmed") }
            if !contents.changes.isEmpty { return contents.changes.removeFirst() }
            return RemoteChanges(updated: [], deleted: [], anchor: anchor)
        }
    }

    func createItem(_ template: RemoteItemTemplate, contents: FilePath?) async throws -> RemoteItem {
        throw FolioError.offline("not in this test")
    }

    func modifyItem(
        _ id: ItemID, in container: ContainerID, baseVersion: String, changes: RemoteItemChanges,
        contents: FilePath?
    ) async throws -> RemoteItem {
        throw FolioError.offline("not in this test")
    }

    func deleteItem(_ id: ItemID, in container: ContainerID, baseVersion: String?, retryTag: String?) async throws {
        throw FolioError.offline("not in this test")
    }
}

/// The merge of remote items with a scope: one folder's listing, a change set since an anchor, and the resync an
/// expired anchor causes (FolioFileSystem+RemoteMerge, FolderLister, RemotePoller).
final class ScopedMergeTests: XCTestCase {
    private func file(_ id: String, in parent: ItemID? = nil, _ name: String, version: String = "v1") -> RemoteItem {
        listedFile(id, in: parent, name, version: version)
    }

    private func folder(_ id: String, in parent: ItemID? = nil, _ name: String) -> RemoteItem {
        listedFolder(id, in: parent, name)
    }

    /// A folder's listing merges that folder only: its subfolders are known but not listed, the rest of the tree
    /// is untouched, and a child the listing no longer names is gone, unless it waits for upload.
    func testFolderListingMergesThatFolderOnly() async throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        XCTAssertTrue(try fs.applyFolderListing(
            FolioFileSystem.rootIno, items: [folder("A", "A"), folder("B", "B"), file("f", "f.txt")]))
        XCTAssertEqual(try core.list(""), ["A", "B", "f.txt"])
        XCTAssertEqual(fs.node(try core.ino("A"))?.childrenListed, false, "a subfolder is not listed with its parent")
        XCTAssertEqual(fs.node(FolioFileSystem.rootIno)?.childrenListed, true)
        XCTAssertEqual(fs.status().foldersNotListed, 2)

        let a = try core.ino("A")
        XCTAssertTrue(try fs.applyFolderListing(a, items: [file("a1", in: ItemID("A"), "a1"),
                                                           file("a2", in: ItemID("A"), "a2")]))
        XCTAssertEqual(try core.list("A"), ["a1", "a2"])
        try await core.write("A/local.txt", "mine")
        // Listed again without a2 (and without the local file, which the remote has not seen yet).
        XCTAssertTrue(try fs.applyFolderListing(a, items: [file("a1", in: ItemID("A"), "a1")]))
        XCTAssertEqual(try core.list("A"), ["a1", "local.txt"], "a2 is gone, the local file stays")
        XCTAssertEqual(try core.list(""), ["A", "B", "f.txt"], "the rest of the tree is untouched")
        XCTAssertEqual(fs.status().foldersNotListed, 1)

        // Kept across a restart: A is listed, B is not.
        try core.remount()
        XCTAssertEqual(core.fileSystem.node(try core.ino("A"))?.childrenListed, true)
        XCTAssertEqual(core.fileSystem.node(try core.ino("B"))?.childrenListed, false)
    }

    /// A folder's first listing tells the kernel to drop the folder's listing (one shown while offline), not each
    /// new name (it never had them: 1,000 notifications for a folder of 1,000); a listing again invalidates what
    /// changed, name by name.
    func testFirstListingInvalidatesTheFolderNotEachName() async throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        let invalidations = RecordingInvalidator()
        fs.connect(materializer: nil, uploader: nil, invalidator: invalidations)
        try fs.applyFolderListing(FolioFileSystem.rootIno, items: [folder("A", "A")])
        let a = try core.ino("A")
        invalidations.clear()
        XCTAssertTrue(try fs.applyFolderListing(a, items: [file("a1", in: ItemID("A"), "a1"),
                                                           file("a2", in: ItemID("A"), "a2")]))
        XCTAssertEqual(try core.list("A"), ["a1", "a2"])
        XCTAssertTrue(invalidations.entries.isEmpty, "new names of a first listing: \(invalidations.entries)")
        XCTAssertEqual(invalidations.inodes, [a], "the folder's listing is dropped")

        invalidations.clear()
        XCTAssertTrue(try fs.applyFolderListing(a, items: [file("a1", in: ItemID("A"), "a1"),
                                                           file("a2", in: ItemID("A"), "a2"),
                                                           file("a3", in: ItemID("A"), "a3")]))
        XCTAssertEqual(invalidations.entries.map(\.name), ["a3"], "a listing again names what changed")
    }

    /// A listing taken before one of our own uploads landed is set aside (it would undo the upload).
    func testFolderListingRacingAnUploadIsSetAside() async throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        try fs.applyFolderListing(FolioFileSystem.rootIno, items: [])
        let epoch = fs.remoteEpoch()
        _ = try await core.uploadedDocument("doc.txt", "mine")
        XCTAssertFalse(try fs.applyFolderListing(FolioFileSystem.rootIno, items: [], epoch: epoch))
        XCTAssertEqual(try core.list(""), ["doc.txt"])
    }

    /// A listing taken before a change set that named something is set aside (the change set could have passed
    /// over a child of it); one taken before an empty change set is not: a listing slower than a poll would be set
    /// aside by every poll otherwise, and never land (a folder of 10,000 on a WebDAV server did).
    func testOnlyAChangeSetThatNamesSomethingSetsAsideAListingTakenBeforeIt() async throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        try fs.registerContainers([(.drive, SyncAnchor("a1"))])
        try fs.applyFolderListing(FolioFileSystem.rootIno, items: [folder("A", "A")])
        let ino = try core.ino("A")

        let before = fs.remoteEpoch()
        for round in 2...5 {
            XCTAssertTrue(try fs.applyChanges(
                RemoteChanges(updated: [], deleted: [], anchor: SyncAnchor("a\(round)")), in: .drive))
        }
        XCTAssertTrue(try fs.applyFolderListing(ino, items: [file("x", in: ItemID("A"), "x")], epoch: before))
        XCTAssertEqual(try core.list("A"), ["x"])

        let older = fs.remoteEpoch()
        XCTAssertTrue(try fs.applyChanges(RemoteChanges(
            updated: [file("y", in: ItemID("A"), "y")], deleted: [], anchor: SyncAnchor("a6")), in: .drive))
        XCTAssertFalse(try fs.applyFolderListing(ino, items: [], epoch: older), "older than what the change set said")
        XCTAssertEqual(try core.list("A"), ["x", "y"])
    }

    /// A change set: changed items in listed folders are merged, an item moved into a folder not listed leaves
    /// the tree, an item the tree does not know in a folder not listed is ignored, a deleted folder goes with
    /// what it held unless something in it waits for upload, and the anchor is stored with the merge.
    func testChangeSetIsMergedWhereTheTreeLooks() async throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        try fs.registerContainers([(.drive, SyncAnchor("a1"))])
        try fs.applyFolderListing(FolioFileSystem.rootIno, items: [folder("A", "A"), folder("B", "B"),
                                                                    folder("C", "C")])
        try fs.applyFolderListing(try core.ino("B"), items: [file("x", in: ItemID("B"), "x")])
        try fs.applyFolderListing(try core.ino("C"), items: [file("c", in: ItemID("C"), "c")])
        try await core.write("C/draft.txt", "local")

        XCTAssertTrue(try fs.applyChanges(RemoteChanges(
            updated: [file("x", in: ItemID("A"), "x"), file("y", in: ItemID("A"), "y"),
                      file("z", in: ItemID("B"), "z"), file("f", "f.txt")],
            deleted: [], anchor: SyncAnchor("a2")), in: .drive))
        XCTAssertEqual(try core.list("B"), ["z"], "x moved into A (not listed): it left the tree; z is new")
        XCTAssertEqual(try core.list(""), ["A", "B", "C", "f.txt"])
        XCTAssertEqual(fs.node(try core.ino("A"))?.childrenListed, false)
        XCTAssertEqual(try core.list("A"), [], "y, in a folder not listed, waits for A's listing")
        XCTAssertEqual(fs.anchor(of: .drive), SyncAnchor("a2"))

        XCTAssertTrue(try fs.applyChanges(RemoteChanges(
            updated: [], deleted: [ItemID("B"), ItemID("C")], anchor: SyncAnchor("a3")), in: .drive))
        XCTAssertEqual(try core.list(""), ["A", "C", "f.txt"], "B went with z; C holds a local change")
        XCTAssertEqual(try core.list("C"), ["draft.txt"], "c went, the local file stays")
        try core.remount()
        XCTAssertEqual(core.fileSystem.anchor(of: .drive), SyncAnchor("a3"), "the anchor is stored")
    }

    /// A change set that raced with our own uploads is set aside and its anchor not taken.
    func testChangeSetRacingAnUploadKeepsTheAnchor() async throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        try fs.registerContainers([(.drive, SyncAnchor("a1"))])
        try fs.applyFolderListing(FolioFileSystem.rootIno, items: [])
        let epoch = fs.remoteEpoch()
        _ = try await core.uploadedDocument("doc.txt", "mine")
        XCTAssertFalse(try fs.applyChanges(
            RemoteChanges(updated: [file("n", "new.txt")], deleted: [], anchor: SyncAnchor("a2")), in: .drive,
            epoch: epoch))
        XCTAssertEqual(fs.anchor(of: .drive), SyncAnchor("a1"))
        XCTAssertEqual(try core.list(""), ["doc.txt"])
    }

    /// A change set naming a file's departure and a new file in its place (an atomic save on the remote that the
    /// provider took for a new item, such as one made while no daemon ran) keeps the item: the same inode, with
    /// the new version. (The local provider answers both at once for this: ChangeJournalTests.)
    func testAChangeSetWithANewFileInTheDepartedOnesPlaceKeepsTheItem() throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        try fs.registerContainers([(.drive, SyncAnchor("a1"))])
        try fs.applyFolderListing(FolioFileSystem.rootIno, items: [folder("A", "A")])
        try fs.applyFolderListing(try core.ino("A"), items: [file("old", in: ItemID("A"), "doc.txt")])
        let ino = try core.ino("A/doc.txt")
        XCTAssertTrue(try fs.applyChanges(RemoteChanges(
            updated: [file("new", in: ItemID("A"), "doc.txt", version: "v2")], deleted: [ItemID("old")],
            anchor: SyncAnchor("a2")), in: .drive))
        XCTAssertEqual(try core.ino("A/doc.txt"), ino, "the same item")
        XCTAssertEqual(fs.node(ino)?.itemID, ItemID("new"))
        XCTAssertEqual(fs.node(ino)?.remoteVersion, "v2")
        XCTAssertEqual(fs.node(ino)?.state, .placeholder)
    }

    /// A full enumeration as a change set (a provider without a change history) counts for listed folders only.
    func testFullEnumerationCountsForListedFoldersOnly() throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        try fs.registerContainers([(.drive, SyncAnchor("a1"))])
        try fs.applyFolderListing(FolioFileSystem.rootIno, items: [folder("A", "A"), file("f", "f.txt")])
        XCTAssertTrue(try fs.applyChanges(RemoteChanges(
            updated: [folder("A", "A"), file("a1", in: ItemID("A"), "a1"), file("g", "g.txt")], deleted: [],
            anchor: SyncAnchor("a2"), isFullEnumeration: true), in: .drive))
        XCTAssertEqual(try core.list(""), ["A", "g.txt"], "f.txt is gone, g.txt is new")
        XCTAssertEqual(try core.list("A"), [], "A is not listed: its children wait for its listing")
    }

    /// Offline, a folder that cannot be listed shows what is known; a name looked up in it fails with the offline
    /// error only if nothing is known of it.
    func testAFolderThatCannotBeListedShowsWhatIsKnown() async throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        let remote = ScriptedRemote()
        remote.put(folder("D", "D"))
        remote.put(file("d1", in: ItemID("D"), "d1"))
        fs.connect(lister: FolderLister(fileSystem: fs, provider: remote, logger: Logger(label: "test")))
        try fs.applyFolderListing(FolioFileSystem.rootIno, items: [folder("D", "D")])
        let d = try core.ino("D")
        try await core.write("D/local.txt", "mine")  // made here while D was never listed
        remote.contents.withLock { $0.offline = true }
        let handle = try await fs.openDirectoryListing(d)
        fs.releaseDirectory(handle)
        XCTAssertEqual(try core.list("D"), ["local.txt"], "what is known")
        let known = try await fs.lookupListing(parent: d, name: "local.txt")
        XCTAssertEqual(known.ino, try core.ino("D/local.txt"))
        do {
            _ = try await fs.lookupListing(parent: d, name: "d1")
            XCTFail("a name nothing is known of needs the listing")
        } catch {
            guard case .offline = error else { return XCTFail("expected offline, got \(error)") }
        }
        remote.contents.withLock { $0.offline = false }
        let listed = try await fs.lookupListing(parent: d, name: "d1")
        XCTAssertEqual(listed.ino, try core.ino("D/d1"))
        XCTAssertEqual(try core.list("D"), ["d1", "local.txt"])
    }

    /// An expired anchor makes the poller take a new anchor and list again every listed folder; a local edit, a
    /// local create and a local delete survive it, and remote changes come in.
    func testExpiredAnchorResyncKeepsLocalChanges() async throws {
        let core = try CoreHarness()
        let fs = core.fileSystem
        let remote = ScriptedRemote()
        let logger = Logger(label: "test")
        remote.put(file("keep", "keep.txt"))
        remote.put(file("gone", "gone.txt"))
        remote.put(folder("D", "D"))
        remote.put(file("d1", in: ItemID("D"), "d1"))
        let poller = RemotePoller(fileSystem: fs, provider: remote, logger: logger, interval: nil)
        fs.connect(lister: FolderLister(fileSystem: fs, provider: remote, logger: logger))
        let started = await poller.start()
        XCTAssertTrue(started)
        XCTAssertEqual(fs.anchor(of: .drive), SyncAnchor("a1"), "the anchor is taken before anything is listed")
        XCTAssertTrue(fs.needsListing(FolioFileSystem.rootIno))
        _ = try await fs.lookupListing(parent: FolioFileSystem.rootIno, name: "D")
        try await fs.ensureListed(try core.ino("D"))
        XCTAssertEqual(try core.list(""), ["D", "gone.txt", "keep.txt"])

        // Local changes: a document edited after its upload, a new file, a delete.
        let draft = try await core.uploadedDocument("draft.txt", "first")
        remote.put(CoreHarness.remoteFile(draft, size: 5, version: "v1"))
        try await core.write("draft.txt", "local edit")
        try await core.write("D/new-local.txt", "new")
        try fs.unlink(parent: FolioFileSystem.rootIno, name: "gone.txt")
        // Remote changes nobody reports: the history is gone.
        remote.put(file("r", "remote-new.txt"))
        remote.remove(ItemID("keep"))
        remote.remove(ItemID("d1"))
        remote.contents.withLock {
            $0.anchor = 2
            $0.anchorExpired = true
        }
        let refreshed = await poller.refresh()
        XCTAssertTrue(refreshed)
        XCTAssertEqual(fs.anchor(of: .drive), SyncAnchor("a2"), "a new anchor after the resync")
        XCTAssertEqual(try core.list(""), ["D", "draft.txt", "remote-new.txt"])
        XCTAssertEqual(try core.list("D"), ["new-local.txt"])
        let read = try await core.read("draft.txt")
        XCTAssertEqual(read, "local edit")
        XCTAssertEqual(fs.node(try core.ino("draft.txt"))?.state.hasPendingLocalVersion, true)
        XCTAssertEqual(fs.pendingUploadCount, 3, "the edit, the new file and the delete still wait for upload")
    }
}
