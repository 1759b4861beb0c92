import FolioCore
@testable import FolioProviderLocal
import Foundation
import Synchronization
import SystemPackage
import XCTest

/// The local provider's change anchors: the journal, changes made by hand found through the watcher and the
/// sweep, anchors across restarts, trimming, and listings of one folder at a time.
final class ChangeJournalTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote()
    }

    override func tearDownWithError() throws {
        remote.remove()
    }

    // MARK: The journal

    func testChangesSinceAnAnchorAreTheProvidersOwnChanges() async throws {
        let provider = try remote.provider()
        let folder = try await provider.createItem(remote.template("Folder", kind: .directory), contents: nil)
        let doomed = try await provider.createItem(remote.template("doomed.txt"), contents: try remote.contentFile("x"))
        let anchor = try await provider.currentAnchor(in: .drive)
        let file = try await provider.createItem(
            remote.template("new.txt", parentID: folder.id), contents: try remote.contentFile("new"))
        let renamed = try await provider.modifyItem(
            folder.id, in: .drive, baseVersion: folder.version, changes: RemoteItemChanges(name: "Renamed"),
            contents: nil)
        try await provider.deleteItem(doomed.id, in: .drive, baseVersion: doomed.version)

        let changes = try await provider.changes(in: .drive, since: anchor)
        XCTAssertFalse(changes.isFullEnumeration)
        XCTAssertFalse(changes.moreComing)
        XCTAssertEqual(changes.updated.map(\.id), [renamed.id, file.id], "parents first, each once")
        XCTAssertEqual(changes.updated.first?.name, "Renamed")
        XCTAssertEqual(changes.deleted, [doomed.id])
        let none = try await provider.changes(in: .drive, since: changes.anchor)
        XCTAssertEqual(none.updated.map(\.name), [])
        XCTAssertEqual(none.deleted, [])
        XCTAssertEqual(none.anchor, changes.anchor)
        let journal = try String(
            contentsOfFile: remote.root.appending(".folio/journal/com.folio.drive").string, encoding: .utf8)
        XCTAssertEqual(journal.split(separator: "\n").count, 1 + 5, "a header and one record per change")
    }

    func testABigBatchComesInBoundedPartsAndAnAnchorSurvivesARestart() async throws {
        let anchor: SyncAnchor
        var made: [ItemID] = []
        do {
            let provider = try remote.provider()
            anchor = try await provider.currentAnchor(in: .drive)
            for number in 0..<10 {
                made.append(
                    try await provider.createItem(
                        remote.template("f\(number).txt"), contents: try remote.contentFile("\(number)")
                    ).id)
            }
        }
        // A new provider (the old one is gone: its process's state too) answers for the old anchor.
        let provider = try remote.provider()
        try provider.tree.withLock { $0.changesPerCall = 3 }
        var reported: [ItemID] = []
        var calls = 0
        var current = anchor
        while true {
            let changes = try await provider.changes(in: .drive, since: current)
            calls += 1
            XCTAssertLessThanOrEqual(changes.updated.count, 3)
            reported += changes.updated.map(\.id)
            current = changes.anchor
            if !changes.moreComing { break }
            XCTAssertLessThan(calls, 10)
        }
        XCTAssertEqual(reported, made)
        XCTAssertEqual(calls, 4)
    }

    func testTrimmingExpiresOnlyAnchorsBeforeWhatIsKept() async throws {
        let provider = try remote.provider()
        try provider.tree.withLock { $0.journalLimit = 4_000 }
        let old = try await provider.currentAnchor(in: .drive)
        var recent: SyncAnchor?
        var last: RemoteItem?
        for number in 0..<60 {
            last = try await provider.createItem(
                remote.template("file number \(number).txt"), contents: try remote.contentFile("\(number)"))
            if number == 55 { recent = try await provider.currentAnchor(in: .drive) }
        }
        let journal = remote.root.appending(".folio/journal/com.folio.drive").string
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
        XCTAssertLessThanOrEqual(size, 4_000, "the journal was trimmed")
        do {
            _ = try await provider.changes(in: .drive, since: old)
            XCTFail("an anchor older than the trimmed journal was answered")
        } catch FolioError.anchorExpired {}
        let changes = try await provider.changes(in: .drive, since: try XCTUnwrap(recent))
        XCTAssertEqual(changes.updated.count, 4)
        XCTAssertEqual(changes.updated.last?.id, last?.id)
    }

    func testDeletingTheJournalOrAnotherRemotesAnchorIsExpired() async throws {
        let provider = try remote.provider()
        let anchor = try await provider.currentAnchor(in: .drive)
        let other = try TemporaryRemote()
        defer { other.remove() }
        do {
            _ = try await other.provider().changes(in: .drive, since: anchor)
            XCTFail("another remote's anchor was answered")
        } catch FolioError.anchorExpired {}
        let notesAnchor = try await provider.currentAnchor(in: TemporaryRemote.notes.id)
        do {
            _ = try await provider.changes(in: .drive, since: notesAnchor)
            XCTFail("another container's anchor was answered")
        } catch FolioError.anchorExpired {}
        _ = try await provider.changes(in: .drive, since: anchor)
        try FileManager.default.removeItem(atPath: remote.root.appending(".folio/journal/com.folio.drive").string)
        do {
            _ = try await provider.changes(in: .drive, since: anchor)
            XCTFail("an anchor of a deleted journal was answered")
        } catch FolioError.anchorExpired {}
        let fresh = try await provider.currentAnchor(in: .drive)
        let none = try await provider.changes(in: .drive, since: fresh)
        XCTAssertEqual(none.updated.count, 0)
    }

    func testAFolderMovedToAnotherContainerLeavesOneAndArrivesWithItsChildrenInTheOther() async throws {
        let provider = try remote.provider()
        let notes = TemporaryRemote.notes.id
        let folder = try await provider.createItem(remote.template("Trip", kind: .directory), contents: nil)
        let child = try await provider.createItem(
            remote.template("plan.txt", parentID: folder.id), contents: try remote.contentFile("plan"))
        _ = try await provider.enumerateItems(in: notes)  // this process knows both containers
        let driveAnchor = try await provider.currentAnchor(in: .drive)
        let notesAnchor = try await provider.currentAnchor(in: notes)
        _ = try await provider.modifyItem(
            folder.id, in: .drive, baseVersion: folder.version,
            changes: RemoteItemChanges(container: notes, parentID: .some(nil)), contents: nil)

        let left = try await provider.changes(in: .drive, since: driveAnchor)
        XCTAssertEqual(left.updated.map(\.name), [])
        XCTAssertEqual(left.deleted, [folder.id])
        // Another process (no index of its own yet) is told of the arrival, the child included.
        let other = try await LocalProvider(root: remote.root).changes(in: notes, since: notesAnchor)
        XCTAssertEqual(other.updated.map(\.id), [folder.id, child.id])
        XCTAssertEqual(other.updated.last?.parentID, folder.id)
        XCTAssertEqual(other.deleted, [])
    }

    func testAFolderDeletedByHandIsOneDeletion() async throws {
        let provider = try remote.provider()
        let folder = try await provider.createItem(remote.template("Gone", kind: .directory), contents: nil)
        _ = try await provider.createItem(
            remote.template("inside.txt", parentID: folder.id), contents: try remote.contentFile("x"))
        for listed in [nil, folder.id] { _ = try await provider.enumerateWholeFolder(listed, in: .drive) }
        let anchor = try await provider.currentAnchor(in: .drive)
        try FileManager.default.removeItem(atPath: remote.path("Gone"))
        let changes = try await provider.changes(in: .drive, since: anchor)
        XCTAssertEqual(changes.deleted, [folder.id], "the folder; its children are gone with it")
        XCTAssertEqual(changes.updated.map(\.name), [])
    }

    // MARK: Changes made by hand

    func testChangesByHandAreFoundThroughTheWatcher() async throws {
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        try provider.tree.withLock { $0.sweepFoldersPerCall = 0 }  // the watcher alone
        XCTAssertNotNil(provider.changeNotifications())
        let edited = try await provider.createItem(remote.template("edited.txt"), contents: try remote.contentFile("1"))
        let doomed = try await provider.createItem(remote.template("doomed.txt"), contents: try remote.contentFile("2"))
        let folder = try await provider.createItem(remote.template("Deep", kind: .directory), contents: nil)
        _ = try await provider.enumerateWholeFolder(nil, in: .drive)
        _ = try await provider.enumerateWholeFolder(folder.id, in: .drive)
        let anchor = try await provider.currentAnchor(in: .drive)

        try remote.writeByHand("by hand", to: "hand.txt")
        try remote.writeByHand("edited by hand", to: "edited.txt")
        try remote.writeByHand("deep down", to: "Deep/deep.txt")
        try FileManager.default.removeItem(atPath: remote.path("doomed.txt"))

        var updated: [String: RemoteItem] = [:]
        var deleted: Set<ItemID> = []
        var current = anchor
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && !(updated.count >= 3 && deleted.contains(doomed.id)) {
            let changes = try await provider.changes(in: .drive, since: current)
            for item in changes.updated { updated[item.name] = item }
            deleted.formUnion(changes.deleted)
            current = changes.anchor
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertEqual(updated["edited.txt"]?.id, edited.id)
        XCTAssertEqual(updated["edited.txt"]?.size, 14)
        XCTAssertNotNil(updated["hand.txt"])
        XCTAssertEqual(updated["deep.txt"]?.parentID, folder.id)
        XCTAssertEqual(deleted, [doomed.id])
    }

    /// With the watcher (started by the first call), every change by hand made before a call is in that call's
    /// answer, however many folders are listed and with no sweep at all; a folder made by hand is watched from
    /// then on, and so is a folder renamed by hand, under its new name. Ten rounds.
    func testEveryChangeByHandBeforeACallIsInItsAnswerWithoutASweep() async throws {
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        try provider.tree.withLock { $0.sweepFoldersPerCall = 0 }
        var folders: [RemoteItem] = []
        for index in 0..<20 {
            let folder = try await provider.createItem(remote.template("F\(index)", kind: .directory), contents: nil)
            folders.append(folder)
            _ = try await provider.createItem(
                remote.template("inside.txt", parentID: folder.id), contents: try remote.contentFile("\(index)"))
            _ = try await provider.enumerateWholeFolder(folder.id, in: .drive)
        }
        _ = try await provider.enumerateWholeFolder(nil, in: .drive)
        var anchor = try await provider.changes(in: .drive, since: try await provider.currentAnchor(in: .drive)).anchor

        func filesChanged() async throws -> [String: RemoteItem] {
            let changes = try await provider.changes(in: .drive, since: anchor)
            anchor = changes.anchor
            var files: [String: RemoteItem] = [:]
            for item in changes.updated where item.kind == .file { files[item.name] = item }
            return files
        }
        for round in 0..<10 {
            try remote.writeByHand("round \(round)", to: "F\(2 * round)/inside.txt")
            try remote.writeByHand("new", to: "F\(19 - round)/new-\(round).txt")
            let files = try await filesChanged()
            XCTAssertEqual(files["inside.txt"]?.parentID, folders[2 * round].id, "round \(round): \(files.keys)")
            XCTAssertEqual(files["inside.txt"]?.size, Int64("round \(round)".utf8.count))
            XCTAssertEqual(files["new-\(round).txt"]?.parentID, folders[19 - round].id, "round \(round)")
        }

        try FileManager.default.createDirectory(atPath: remote.path("Fresh"), withIntermediateDirectories: false)
        try remote.writeByHand("a", to: "Fresh/a.txt")
        let fresh = try await provider.changes(in: .drive, since: anchor)
        anchor = fresh.anchor
        let freshFolder = try XCTUnwrap(fresh.updated.first { $0.name == "Fresh" }, "the new folder is reported")
        let listed = try await provider.enumerateWholeFolder(freshFolder.id, in: .drive)
        XCTAssertEqual(listed.map(\.name), ["a.txt"])
        try remote.writeByHand("b", to: "Fresh/b.txt")
        let inFresh = try await filesChanged()
        XCTAssertEqual(inFresh["b.txt"]?.parentID, freshFolder.id, "the new folder is watched")

        try FileManager.default.moveItem(atPath: remote.path("F3"), toPath: remote.path("Renamed"))
        try remote.writeByHand("after", to: "Renamed/after.txt")
        let afterRename = try await filesChanged()
        XCTAssertEqual(afterRename["after.txt"]?.parentID, folders[3].id, "watched under its new name")
        try remote.writeByHand("later", to: "Renamed/later.txt")
        let later = try await filesChanged()
        XCTAssertEqual(later["later.txt"]?.parentID, folders[3].id)
    }

    /// A remote with more folders than inotify watches left: changes in the folders the watcher could not watch
    /// are found by the sweep, which runs as well.
    func testFoldersBeyondTheWatchLimitAreSwept() async throws {
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        provider.watchLimit.store(3, ordering: .relaxed)  // the container's root, and two of its folders
        try provider.tree.withLock { $0.sweepFoldersPerCall = 2 }
        let folders = try await sixListedFolders(provider)
        var anchor = try await provider.changes(in: .drive, since: try await provider.currentAnchor(in: .drive)).anchor
        for (index, name) in ["A", "B", "C", "D", "E", "F"].enumerated() {
            try remote.writeByHand("changed by hand", to: "\(name)/inside.txt")
            var found = false
            for _ in 0..<4 where !found {  // seven listed folders, two swept per call
                let changes = try await provider.changes(in: .drive, since: anchor)
                anchor = changes.anchor
                found = changes.updated.contains { $0.name == "inside.txt" && $0.parentID == folders[index].id }
            }
            XCTAssertTrue(found, "the change in \(name) is found")
        }
    }

    /// The remote's folder replaced by a copy of itself (restored from a backup) between two calls: the watcher,
    /// which watched the folder that is gone, is replaced, and a change by hand made afterwards is found at the
    /// next call. A stopped watcher is replaced too.
    func testAWatcherThatLostTheRemoteIsReplaced() async throws {
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        try provider.tree.withLock { tree in
            tree.sweepFoldersPerCall = 0
            tree.slowSweepSeconds = 3600  // the watcher alone
        }
        let folder = try await provider.createItem(remote.template("Shared", kind: .directory), contents: nil)
        _ = try await provider.enumerateWholeFolder(nil, in: .drive)
        _ = try await provider.enumerateWholeFolder(folder.id, in: .drive)
        var anchor = try await provider.changes(in: .drive, since: try await provider.currentAnchor(in: .drive)).anchor

        let copy = remote.root.string + ".restored"
        XCTAssertEqual(try Self.run("/bin/cp", "-a", remote.root.string, copy), 0)
        try FileManager.default.removeItem(atPath: remote.root.string)
        try FileManager.default.moveItem(atPath: copy, toPath: remote.root.string)
        anchor = try await provider.changes(in: .drive, since: anchor).anchor  // the news of the folder gone
        try remote.writeByHand("after the restore", to: "Shared/back.txt")
        let changes = try await provider.changes(in: .drive, since: anchor)
        anchor = changes.anchor
        XCTAssertTrue(
            changes.updated.contains { $0.name == "back.txt" && $0.parentID == folder.id },
            "a change after the restore is found: \(changes.updated.map(\.name)) \(changes.deleted)")

        provider.stopWatching()
        try remote.writeByHand("after a stop", to: "Shared/stopped.txt")
        let afterStop = try await provider.changes(in: .drive, since: anchor)
        XCTAssertTrue(afterStop.updated.contains { $0.name == "stopped.txt" }, "a new watcher after a stop")
    }

    /// What inotify does not report (here a `truncate` by path, which only sends `IN_MODIFY`; another machine
    /// writing to a network folder is the same) is found by the slow sweep while the watcher runs.
    func testWhatTheWatcherCannotSeeIsFoundByTheSlowSweep() async throws {
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        try provider.tree.withLock { $0.sweepFoldersPerCall = 0 }
        let folder = try await provider.createItem(remote.template("Quiet", kind: .directory), contents: nil)
        let file = try await provider.createItem(
            remote.template("long.txt", parentID: folder.id), contents: try remote.contentFile("a longer content"))
        _ = try await provider.enumerateWholeFolder(nil, in: .drive)
        _ = try await provider.enumerateWholeFolder(folder.id, in: .drive)
        var anchor = try await provider.changes(in: .drive, since: try await provider.currentAnchor(in: .drive)).anchor
        XCTAssertEqual(truncate(remote.path("Quiet/long.txt"), 3), 0)
        var found: RemoteItem?
        let deadline = Date().addingTimeInterval(15)
        while found == nil && Date() < deadline {
            let changes = try await provider.changes(in: .drive, since: anchor)
            anchor = changes.anchor
            found = changes.updated.first { $0.id == file.id }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertEqual(found?.size, 3, "the truncate is found by the slow sweep")
    }

    /// Starting the watcher costs nothing in proportion to the remote (issue 14: at 1,000,000 items it read all
    /// 1,000 folders and took 1,000 watches before the first change could be seen): it watches the remote's folder
    /// and the folders listed so far, never one nobody listed, and each folder from its first listing on, where a
    /// change by hand is then found with no sweep; a listed folder moved by hand, with a listed folder inside it,
    /// is watched under its new path, the one inside too. (Watches are read from the kernel: `/proc/self/fdinfo`.)
    func testTheWatcherWatchesTheListedFoldersOnly() async throws {
        for index in 0..<30 { try remote.writeByHand("\(index)", to: "F\(index)/inside.txt") }
        try remote.writeByHand("inner", to: "Outer/Inner/inner.txt")
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        try provider.tree.withLock { tree in
            tree.sweepFoldersPerCall = 0
            tree.slowSweepSeconds = 3600  // the watcher alone
            tree.lastSlowSweep[.drive] = Int64.max / 2  // (the first slow sweep would otherwise be due at once)
        }
        let top = try await provider.enumerateWholeFolder(nil, in: .drive)
        var anchor = try await provider.currentAnchor(in: .drive)
        XCTAssertNotNil(provider.changeNotifications())
        let folders = try (0..<30).map { try Self.inode(of: remote.path("F\($0)")) }
        XCTAssertTrue(try Self.watchedInodes().contains(Self.inode(of: remote.path(""))), "the Drive's root")
        XCTAssertEqual(Self.watchedInodes().intersection(folders), [], "no folder never listed is watched")
        anchor = try await provider.changes(in: .drive, since: anchor).anchor  // the start's sweep

        let listed = try XCTUnwrap(top.first { $0.name == "F7" })
        _ = try await provider.enumerateWholeFolder(listed.id, in: .drive)
        XCTAssertEqual(Self.watchedInodes().intersection(folders), [folders[7]], "watched once listed")
        try remote.writeByHand("changed by hand", to: "F7/inside.txt")
        var changes = try await provider.changes(in: .drive, since: anchor)
        anchor = changes.anchor
        XCTAssertTrue(
            changes.updated.contains { $0.name == "inside.txt" && $0.parentID == listed.id },
            "\(changes.updated.map(\.name))")

        let outer = try XCTUnwrap(top.first { $0.name == "Outer" })
        let inOuter = try await provider.enumerateWholeFolder(outer.id, in: .drive)
        let inner = try XCTUnwrap(inOuter.first)
        _ = try await provider.enumerateWholeFolder(inner.id, in: .drive)
        try FileManager.default.moveItem(atPath: remote.path("Outer"), toPath: remote.path("Moved"))
        try remote.writeByHand("after the move", to: "Moved/Inner/after.txt")
        changes = try await provider.changes(in: .drive, since: anchor)
        anchor = changes.anchor
        XCTAssertTrue(changes.updated.contains { $0.id == outer.id }, "moved: \(changes.updated.map(\.name))")
        XCTAssertEqual(changes.updated.first { $0.name == "after.txt" }?.parentID, inner.id)
        try remote.writeByHand("later", to: "Moved/Inner/later.txt")
        changes = try await provider.changes(in: .drive, since: anchor)
        XCTAssertEqual(changes.updated.first { $0.name == "later.txt" }?.parentID, inner.id, "watched at its new path")
    }

    /// A listed folder moved by hand out of the remote (to a Trash on the same filesystem), with a listed folder
    /// inside it, and one moved into a folder never listed, lose their watches (inotify follows a folder: its
    /// events would make the provider list whatever is at its old path, and its watch would count against the
    /// limit forever); a folder made by hand at the old path is watched once listed, and the folder moved into
    /// the unlisted one is watched again once listed there.
    func testAFolderMovedOutOfTheWatchedFoldersIsNoLongerWatched() async throws {
        try remote.writeByHand("away", to: "Away/Sub/sub.txt")
        try remote.writeByHand("drifting", to: "Drifting/drift.txt")
        try remote.writeByHand("hidden", to: "Hidden/hidden.txt")
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        try provider.tree.withLock { tree in
            tree.sweepFoldersPerCall = 0
            tree.slowSweepSeconds = 3600  // the watcher alone
        }
        let top = try await provider.enumerateWholeFolder(nil, in: .drive)
        let away = try XCTUnwrap(top.first { $0.name == "Away" })
        let inAway = try await provider.enumerateWholeFolder(away.id, in: .drive)
        let sub = try XCTUnwrap(inAway.first)
        _ = try await provider.enumerateWholeFolder(sub.id, in: .drive)
        let drifting = try XCTUnwrap(top.first { $0.name == "Drifting" })
        _ = try await provider.enumerateWholeFolder(drifting.id, in: .drive)
        var anchor = try await provider.changes(in: .drive, since: try await provider.currentAnchor(in: .drive)).anchor
        let moved = try ["Away", "Away/Sub", "Drifting"].map { try Self.inode(of: remote.path($0)) }
        XCTAssertEqual(Self.watchedInodes().intersection(moved), Set(moved), "listed: watched")

        let trash = remote.root.string + "-scratch/Trash"
        try FileManager.default.createDirectory(atPath: trash, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: remote.path("Away"), toPath: trash + "/Away")
        try FileManager.default.moveItem(atPath: remote.path("Drifting"), toPath: remote.path("Hidden/Drifting"))
        var changes = try await provider.changes(in: .drive, since: anchor)
        anchor = changes.anchor
        XCTAssertTrue(changes.deleted.contains(away.id), "\(changes.deleted)")
        XCTAssertEqual(Self.watchedInodes().intersection(moved), [], "moved out of the watched folders: unwatched")

        try remote.writeByHand("new", to: "Away/new.txt")
        changes = try await provider.changes(in: .drive, since: anchor)
        anchor = changes.anchor
        let newAway = try XCTUnwrap(changes.updated.first { $0.name == "Away" }, "\(changes.updated.map(\.name))")
        XCTAssertNotEqual(newAway.id, away.id)
        _ = try await provider.enumerateWholeFolder(newAway.id, in: .drive)
        XCTAssertTrue(try Self.watchedInodes().contains(Self.inode(of: remote.path("Away"))), "the new one")
        XCTAssertEqual(Self.watchedInodes().intersection(moved), [])
        try remote.writeByHand("changed by hand", to: "Away/new.txt")
        changes = try await provider.changes(in: .drive, since: anchor)
        anchor = changes.anchor
        XCTAssertEqual(changes.updated.first { $0.name == "new.txt" }?.parentID, newAway.id)

        let hidden = try XCTUnwrap(top.first { $0.name == "Hidden" })
        let inHidden = try await provider.enumerateWholeFolder(hidden.id, in: .drive)
        let found = try XCTUnwrap(inHidden.first { $0.name == "Drifting" })
        _ = try await provider.enumerateWholeFolder(found.id, in: .drive)
        XCTAssertTrue(Self.watchedInodes().contains(moved[2]), "watched again once listed at its new place")
        try remote.writeByHand("drifted", to: "Hidden/Drifting/drift.txt")
        changes = try await provider.changes(in: .drive, since: anchor)
        XCTAssertEqual(changes.updated.first { $0.name == "drift.txt" }?.parentID, found.id)
    }

    /// The watcher alone (no provider to find folders gone): a watched folder moved into a folder not watched
    /// loses its watch at the news of its move, with the watched folder inside it; one renamed in a watched folder
    /// keeps it, reported under its new path with the one inside, which follows; so does one moved out of a folder
    /// that was renamed just before, in the same batch of events.
    func testTheWatcherStopsWatchingAFolderMovedWhereNothingIsWatched() throws {
        let top = remote.root.string + "-scratch/Watched"
        for folder in ["Away/Inside", "Renamed/Inside", "Unwatched", "Pair/Inside"] {
            try FileManager.default.createDirectory(atPath: top + "/" + folder, withIntermediateDirectories: true)
        }
        let watcher = try XCTUnwrap(RemoteWatcher(root: FilePath(top)))
        defer { watcher.stop() }
        for folder in ["Away", "Away/Inside", "Renamed", "Renamed/Inside", "Pair", "Pair/Inside"] {
            watcher.watch(FilePath(top + "/" + folder))
        }
        _ = watcher.takeChangedFolders(under: FilePath(top))
        let away = try ["Away", "Away/Inside"].map { try Self.inode(of: top + "/" + $0) }
        let renamed = try ["Renamed", "Renamed/Inside", "Pair/Inside"].map { try Self.inode(of: top + "/" + $0) }
        XCTAssertEqual(Self.watchedInodes().intersection(away + renamed), Set(away + renamed))

        try FileManager.default.moveItem(atPath: top + "/Away", toPath: top + "/Unwatched/Away")
        try FileManager.default.moveItem(atPath: top + "/Renamed", toPath: top + "/New name")
        try FileManager.default.moveItem(atPath: top + "/Pair", toPath: top + "/Pair renamed")
        try FileManager.default.moveItem(atPath: top + "/Pair renamed/Inside", toPath: top + "/Single")
        let changed = watcher.takeChangedFolders(under: FilePath(top)).paths.map(\.string)
        XCTAssertEqual(Self.watchedInodes().intersection(away + renamed), Set(renamed), "the one moved away: none")
        XCTAssertTrue(Set(changed).isSuperset(of: [top + "/New name", top + "/New name/Inside"]), "\(changed)")
        try FileManager.default.createDirectory(
            atPath: top + "/New name/Inside/Made", withIntermediateDirectories: false)
        let inside = watcher.takeChangedFolders(under: FilePath(top)).paths.map(\.string)
        XCTAssertEqual(inside, [top + "/New name/Inside"], "watched under its new path")
        try FileManager.default.createDirectory(atPath: top + "/Single/Made", withIntermediateDirectories: false)
        let single = watcher.takeChangedFolders(under: FilePath(top)).paths.map(\.string)
        XCTAssertEqual(single, [top + "/Single"], "moved twice in one batch, watched under its last path")
    }

    /// A listed folder inside a folder never listed (so neither watched), that folder moved by hand out of the
    /// remote: no event names the listed folder, whose watch goes when the provider finds its parent gone.
    func testAListedFolderInsideAFolderNeverListedMovedAwayIsNoLongerWatched() async throws {
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        try provider.tree.withLock { tree in
            tree.sweepFoldersPerCall = 0
            tree.slowSweepSeconds = 3600  // the watcher alone
        }
        // (Made by hand: a folder the provider makes is listed, empty, at once.)
        try FileManager.default.createDirectory(atPath: remote.path("Shell"), withIntermediateDirectories: false)
        let top = try await provider.enumerateWholeFolder(nil, in: .drive)
        let shell = try XCTUnwrap(top.first { $0.name == "Shell" })
        let kernel = try await provider.createItem(
            remote.template("Kernel", kind: .directory, parentID: shell.id), contents: nil)
        _ = try await provider.enumerateWholeFolder(kernel.id, in: .drive)
        let anchor = try await provider.changes(in: .drive, since: try await provider.currentAnchor(in: .drive)).anchor
        let inode = try Self.inode(of: remote.path("Shell/Kernel"))
        XCTAssertTrue(Self.watchedInodes().contains(inode), "listed: watched")
        XCTAssertFalse(try Self.watchedInodes().contains(Self.inode(of: remote.path("Shell"))), "never listed")

        let trash = remote.root.string + "-scratch/Trash"
        try FileManager.default.createDirectory(atPath: trash, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: remote.path("Shell"), toPath: trash + "/Shell")
        let changes = try await provider.changes(in: .drive, since: anchor)
        XCTAssertTrue(changes.deleted.contains(shell.id), "\(changes.deleted)")
        XCTAssertFalse(Self.watchedInodes().contains(inode), "gone with its parent: unwatched")
    }

    /// A listed folder renamed by hand, holding 300 folders never listed and a listed folder two levels down: the
    /// watcher follows the rename in its table of watches (the watched folders below it take the new path) and
    /// looks at none of the folders never listed (it read every one of them, holding the lock every listing
    /// needs); a change by hand in the folder two levels down is found, then and later.
    func testARenamedFolderIsFollowedWithoutReadingTheFoldersNeverListedInside() async throws {
        for index in 0..<300 {
            try FileManager.default.createDirectory(
                atPath: remote.path("Big/S\(index)/Below"), withIntermediateDirectories: true)
        }
        try remote.writeByHand("deep", to: "Big/S0/Deep/deep.txt")
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        try provider.tree.withLock { tree in
            tree.sweepFoldersPerCall = 0
            tree.slowSweepSeconds = 3600  // the watcher alone
        }
        let top = try await provider.enumerateWholeFolder(nil, in: .drive)
        let big = try XCTUnwrap(top.first { $0.name == "Big" })
        let inBig = try await provider.enumerateWholeFolder(big.id, in: .drive)
        let first = try XCTUnwrap(inBig.first { $0.name == "S0" })
        let inFirst = try await provider.enumerateWholeFolder(first.id, in: .drive)
        let deep = try XCTUnwrap(inFirst.first { $0.name == "Deep" })
        _ = try await provider.enumerateWholeFolder(deep.id, in: .drive)
        var anchor = try await provider.changes(in: .drive, since: try await provider.currentAnchor(in: .drive)).anchor
        let watcher = try XCTUnwrap(provider.watcher.withLock { $0 })
        let lookedAt = watcher.pathsLookedAt.load(ordering: .relaxed)

        try FileManager.default.moveItem(atPath: remote.path("Big"), toPath: remote.path("Renamed"))
        try remote.writeByHand("after", to: "Renamed/S0/Deep/after.txt")
        var changes = try await provider.changes(in: .drive, since: anchor)
        anchor = changes.anchor
        XCTAssertLessThan(watcher.pathsLookedAt.load(ordering: .relaxed) - lookedAt, 20, "the moved folders read")
        XCTAssertTrue(changes.updated.contains { $0.id == big.id }, "renamed: \(changes.updated.map(\.name))")
        XCTAssertEqual(changes.updated.first { $0.name == "after.txt" }?.parentID, deep.id)
        try remote.writeByHand("later", to: "Renamed/S0/Deep/later.txt")
        changes = try await provider.changes(in: .drive, since: anchor)
        XCTAssertEqual(changes.updated.first { $0.name == "later.txt" }?.parentID, deep.id, "watched at its new path")
    }

    /// The watcher's start is news at once (a listed folder may have changed before its watch): its first
    /// notification comes without any change, so the poller takes the start's sweep in at once, not at the next
    /// change or poll (a change in a folder watched only after it was made waited 30 s for the poll).
    func testTheWatchersStartIsNewsAtOnce() async throws {
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        let notifications = try XCTUnwrap(provider.changeNotifications())
        let first = Task { () -> Bool in
            for await _ in notifications { return true }
            return false
        }
        let deadline = Task {
            try? await Task.sleep(for: .seconds(10))
            first.cancel()
        }
        defer { deadline.cancel() }
        let notified = await first.value
        XCTAssertTrue(notified, "no notification within 10 s of the start")
    }

    /// The inode of the folder at `path`.
    private static func inode(of path: String) throws -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw FolioError.notFound(path) }
        return UInt64(info.st_ino)
    }

    /// The inodes this process watches with inotify (every inotify descriptor's watches, as the kernel lists them
    /// in `/proc/self/fdinfo`).
    private static func watchedInodes() -> Set<UInt64> {
        var inodes: Set<UInt64> = []
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in descriptors {
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"))
                == "anon_inode:inotify",
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)
            else { continue }
            for line in info.split(separator: "\n") where line.hasPrefix("inotify wd:") {
                guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("ino:") }),
                    let inode = UInt64(field.dropFirst(4), radix: 16)
                else { continue }
                inodes.insert(inode)
            }
        }
        return inodes
    }

    /// Folders A…F of the Drive, each with an `inside.txt` (content: its name), all listed, and the Drive's root.
    private func sixListedFolders(_ provider: LocalProvider) async throws -> [RemoteItem] {
        var folders: [RemoteItem] = []
        for name in ["A", "B", "C", "D", "E", "F"] {
            let folder = try await provider.createItem(remote.template(name, kind: .directory), contents: nil)
            folders.append(folder)
            _ = try await provider.createItem(
                remote.template("inside.txt", parentID: folder.id), contents: try remote.contentFile(name))
            _ = try await provider.enumerateWholeFolder(folder.id, in: .drive)
        }
        _ = try await provider.enumerateWholeFolder(nil, in: .drive)
        return folders
    }

    private static func run(_ tool: String, _ arguments: String...) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    func testChangesByHandAreFoundByTheSweepWithoutAWatcher() async throws {
        let provider = try remote.provider()
        provider.watchesForChanges.store(false, ordering: .relaxed)  // as where inotify is not available
        let folders = try await sixListedFolders(provider)
        let listings = Mutex(0)
        try provider.tree.withLock { tree in
            tree.sweepFoldersPerCall = 2
            tree.folderListed = { _ in listings.withLock { $0 += 1 } }
        }
        let anchor = try await provider.currentAnchor(in: .drive)
        try remote.writeByHand("changed by hand", to: "D/inside.txt")
        try remote.writeByHand("new by hand", to: "F/new.txt")
        try FileManager.default.removeItem(atPath: remote.path("B/inside.txt"))

        var updated: [String: RemoteItem] = [:]
        var deleted = 0
        var current = anchor
        var calls = 0
        // Seven listed folders (the root and six), two per call: all seen within four calls.
        while calls < 4 {
            let changes = try await provider.changes(in: .drive, since: current)
            calls += 1
            // Folders whose entries changed are reported too (their modification time changed): files only here.
            for item in changes.updated where item.kind == .file {
                updated["\(item.parentID.map(\.rawValue) ?? "")/\(item.name)"] = item
            }
            deleted += changes.deleted.count
            current = changes.anchor
            XCTAssertLessThanOrEqual(listings.withLock { $0 }, 2 * calls, "a call lists at most two folders")
        }
        XCTAssertEqual(updated["\(folders[3].id.rawValue)/inside.txt"]?.size, 15)
        XCTAssertNotNil(updated["\(folders[5].id.rawValue)/new.txt"])
        XCTAssertEqual(deleted, 1)
        XCTAssertEqual(updated.count, 2, "\(updated.keys)")
    }

    func testAMoveByHandBetweenListedFoldersIsOneChange() async throws {
        let provider = try remote.provider()
        let from = try await provider.createItem(remote.template("From", kind: .directory), contents: nil)
        let into = try await provider.createItem(remote.template("Into", kind: .directory), contents: nil)
        let file = try await provider.createItem(
            remote.template("moving.txt", parentID: from.id), contents: try remote.contentFile("m"))
        for folder in [nil, from.id, into.id] { _ = try await provider.enumerateWholeFolder(folder, in: .drive) }
        let anchor = try await provider.currentAnchor(in: .drive)
        try FileManager.default.moveItem(atPath: remote.path("From/moving.txt"), toPath: remote.path("Into/moved.txt"))
        try provider.tree.withLock { $0.sweepFoldersPerCall = 3 }
        let changes = try await provider.changes(in: .drive, since: anchor)
        let files = changes.updated.filter { $0.kind == .file }
        XCTAssertEqual(files.map(\.id), [file.id])
        XCTAssertEqual(files.first?.parentID, into.id)
        XCTAssertEqual(files.first?.name, "moved.txt")
        XCTAssertEqual(changes.deleted, [])
    }

    // MARK: Listing one folder

    func testListingAFolderLooksAtThatFolderOnly() async throws {
        let provider = try remote.provider()
        for name in ["A", "B", "C"] {
            try remote.writeByHand("inside", to: "\(name)/sub/inside.txt")
        }
        try remote.writeByHand("top", to: "top.txt")
        let listed = Mutex<[String]>([])
        try provider.tree.withLock { tree in
            tree.folderListed = { path in listed.withLock { $0.append(path.lastComponent?.string ?? "") } }
        }
        let page = try await provider.enumerateFolder(nil, in: .drive, from: nil, pageSize: 2)
        XCTAssertEqual(page.items.map(\.name), ["A", "B"])
        XCTAssertEqual(listed.withLock { $0 }, ["com.folio.drive"], "one folder read, not the container")
        let rest = try await provider.enumerateFolder(nil, in: .drive, from: page.next, pageSize: 2)
        XCTAssertEqual(rest.items.map(\.name), ["C", "top.txt"])
        XCTAssertNil(rest.next)
        let subfolders = try await provider.enumerateWholeFolder(page.items[0].id, in: .drive)
        XCTAssertEqual(subfolders.map(\.name), ["sub"])
        XCTAssertEqual(listed.withLock { $0 }.count, 3)
        // Ids given to what was made by hand stick.
        let again = try await LocalProvider(root: remote.root).enumerateWholeFolder(nil, in: .drive)
        XCTAssertEqual(again.map(\.id), page.items.map(\.id) + rest.items.map(\.id))
        do {
            _ = try await provider.enumerateFolder(nil, in: .drive, from: PageCursor("garbage"), pageSize: 2)
            XCTFail("a garbage cursor was accepted")
        } catch FolioError.anchorExpired {}
    }

    /// A create looks at its own place only, never through the container (an untar of n files would cost n
    /// walks of everything), also in a provider that indexed nothing yet (after a restart).
    func testACreateNeverWalksTheContainer() async throws {
        let setup = try remote.provider()
        for index in 0..<20 {
            let folder = try await setup.createItem(remote.template("F\(index)", kind: .directory), contents: nil)
            _ = try await setup.createItem(
                remote.template("inside.txt", parentID: folder.id), contents: try remote.contentFile("\(index)"))
        }
        let provider = try remote.provider()
        let listings = Mutex(0)
        try provider.tree.withLock { tree in
            tree.indexes = [:]  // as after a restart
            tree.folderListed = { _ in listings.withLock { $0 += 1 } }
        }
        for index in 0..<10 {
            _ = try await provider.createItem(remote.template("new-\(index).txt"), contents: try remote.contentFile("n"))
        }
        let folder = try await provider.createItem(remote.template("Fresh", kind: .directory), contents: nil)
        _ = try await provider.createItem(
            remote.template("inner.txt", parentID: folder.id), contents: try remote.contentFile("i"))
        XCTAssertEqual(listings.withLock { $0 }, 0, "no folder listed by a create")
    }

    func testAnItemIsFoundByIDAfterARestartWithoutListingItsFolderFirst() async throws {
        let file: RemoteItem
        do {
            let provider = try remote.provider()
            let folder = try await provider.createItem(remote.template("Far", kind: .directory), contents: nil)
            file = try await provider.createItem(
                remote.template("away.txt", parentID: folder.id), contents: try remote.contentFile("away"))
        }
        let provider = try remote.provider()
        let found = try await provider.item(file.id, in: .drive)
        XCTAssertEqual(found.name, "away.txt")
        XCTAssertEqual(found.version, file.version)
        do {
            _ = try await provider.item(.generate(), in: .drive)
            XCTFail("an unknown id was found")
        } catch FolioError.notFound {}
    }

    /// A file saved by hand (a new file renamed over it) while no provider ran, after its creation was journaled
    /// but before a client took the changes: the changes since the client's anchor name the file now in its place
    /// along with its departure, in one answer, so that client sees an atomic save and keeps the item (DESIGN.md
    /// §2) instead of a deletion now and a new item when it next lists the folder.
    func testAFileSavedByHandWhileNoProviderRanComesWithItsDeparture() async throws {
        let folder: RemoteItem
        let file: RemoteItem
        let anchor: SyncAnchor
        do {
            let provider = try remote.provider()
            folder = try await provider.createItem(remote.template("more", kind: .directory), contents: nil)
            anchor = try await provider.currentAnchor(in: .drive)
            file = try await provider.createItem(
                remote.template("clean.txt", parentID: folder.id), contents: try remote.contentFile("first"))
        }
        try remote.writeByHand("second\n", to: "more/.clean.txt.swp")
        XCTAssertEqual(rename(remote.path("more/.clean.txt.swp"), remote.path("more/clean.txt")), 0)

        let provider = try remote.provider()
        let changes = try await provider.changes(in: .drive, since: anchor)
        XCTAssertEqual(changes.deleted, [file.id], "the old file is gone")
        let successor = try XCTUnwrap(
            changes.updated.first { $0.name == "clean.txt" }, "the new file comes with it: \(changes.updated)")
        XCTAssertEqual(successor.parentID, folder.id)
        XCTAssertEqual(successor.kind, .file)
        XCTAssertEqual(successor.size, 7)
        XCTAssertNotEqual(successor.id, file.id)
        let listed = try await provider.enumerateWholeFolder(folder.id, in: .drive)
        XCTAssertEqual(listed.map(\.id), [successor.id], "the folder's listing agrees")
    }
}
