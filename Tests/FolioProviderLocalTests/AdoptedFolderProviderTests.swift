import FolioCore
import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// An adopted folder of documents at the provider (issue 14): the folder is the Drive container, nothing is
/// written on the user's items (ids from inodes and the id map in `.folio/`), hard links are distinct items, and
/// the folders that cannot be adopted are refused with their reason.
final class AdoptedFolderProviderTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote(adopted: true)
    }

    override func tearDownWithError() throws {
        remote.remove()
    }

    func testTheFolderIsTheDriveAndItsAppContainersLiveInDotFolio() async throws {
        let provider = try remote.provider()
        let containers = try await provider.listContainers()
        XCTAssertEqual(containers.map(\.id), [.drive, TemporaryRemote.notes.id])
        let top = try await provider.enumerateItems(in: .drive).items.filter { $0.parentID == nil }
        XCTAssertEqual(top.map(\.name).sorted(), TemporaryRemote.adoptedDocuments, "no .folio among the items")
        let notes = remote.root.string + "/.folio/containers/com.example.notes"
        XCTAssertTrue(FileManager.default.fileExists(atPath: notes))
        XCTAssertFalse(FileManager.default.fileExists(atPath: remote.root.string + "/.folio-remote.json"))
        XCTAssertTrue(LocalProvider.isRemote(at: remote.root))
        XCTAssertNotNil(LocalProvider.remoteID(at: remote.root))
    }

    func testNothingIsWrittenOnTheUsersItemsAndIDsSurviveChangesThroughFolio() async throws {
        let provider = try remote.provider()
        let before = try await provider.enumerateItems(in: .drive).items
        let existing = try XCTUnwrap(before.first { $0.name == "existing.txt" })
        // Read-only use writes nothing.
        _ = try await provider.fetchContents(
            of: existing.id, in: .drive, version: existing.version, to: try remote.destination(), progress: { _ in })
        XCTAssertEqual(userAttributes(), "")

        // A change of content (a new inode, renamed into place) keeps the id; so does a rename.
        let changed = try await provider.modifyItem(
            existing.id, in: .drive, baseVersion: existing.version, changes: RemoteItemChanges(name: "renamed.txt"),
            contents: try remote.contentFile("changed\n"))
        XCTAssertEqual(changed.id, existing.id)
        let made = try await provider.createItem(remote.template("new.txt"), contents: try remote.contentFile("new\n"))
        let folder = try await provider.createItem(remote.template("New folder", kind: .directory), contents: nil)
        XCTAssertEqual(try String(contentsOfFile: remote.path("renamed.txt"), encoding: .utf8), "changed\n")
        XCTAssertEqual(userAttributes(), "", "no attribute on changed or created items either")

        // A new provider's scan finds the same ids.
        let ids = try await Self.idsByName(in: remote.root)
        XCTAssertEqual(ids["renamed.txt"], existing.id.rawValue)
        XCTAssertEqual(ids["new.txt"], made.id.rawValue)
        XCTAssertEqual(ids["New folder"], folder.id.rawValue)
        XCTAssertEqual(ids["Existing folder"], before.first { $0.name == "Existing folder" }?.id.rawValue)
    }

    func testHardLinksAreDistinctItems() async throws {
        XCTAssertEqual(link(remote.path("existing.txt"), remote.path("second name.txt")), 0)
        let items = try await remote.provider().enumerateItems(in: .drive).items
        let first = try XCTUnwrap(items.first { $0.name == "existing.txt" })
        let second = try XCTUnwrap(items.first { $0.name == "second name.txt" })
        XCTAssertNotEqual(first.id, second.id)
        XCTAssertEqual(Set(items.map(\.id)).count, items.count, "no id twice")
        // Stable: the same ids again, also in another process.
        let ids = try await Self.idsByName(in: remote.root)
        XCTAssertEqual(ids["existing.txt"], first.id.rawValue)
        XCTAssertEqual(ids["second name.txt"], second.id.rawValue)
    }

    func testDotFolioAtTheTopIsKeptForFolio() async throws {
        let provider = try remote.provider()
        do {
            _ = try await provider.createItem(remote.template(".folio", kind: .directory), contents: nil)
            XCTFail("a folder named .folio was made at the top")
        } catch FolioError.invalidArgument(let message) {
            XCTAssertTrue(message.contains("kept for Folio"), message)
        }
        let items = try await provider.enumerateItems(in: .drive).items
        let existing = try XCTUnwrap(items.first { $0.name == "existing.txt" })
        do {
            _ = try await provider.modifyItem(
                existing.id, in: .drive, baseVersion: existing.version, changes: RemoteItemChanges(name: ".folio"),
                contents: nil)
            XCTFail("an item was renamed to .folio at the top")
        } catch FolioError.invalidArgument(let message) {
            XCTAssertTrue(message.contains("kept for Folio"), message)
        }
    }

    func testFoldersThatCannotBeAdoptedAreRefused() throws {
        XCTAssertTrue(LocalProvider.adoptionRefusal(of: FilePath("/"))?.contains("/ cannot be adopted") == true)
        let home = try XCTUnwrap(ProcessInfo.processInfo.environment["HOME"])
        XCTAssertTrue(LocalProvider.adoptionRefusal(of: FilePath(home))?.contains("home folder") == true)
        XCTAssertNil(LocalProvider.adoptionRefusal(of: remote.root))

        // Inside another remote: an adopted one, and one Folio made.
        let inner = remote.root.appending("Existing folder")
        XCTAssertThrowsError(try LocalProvider.adopt(at: inner)) { error in
            XCTAssertTrue("\(error)".contains("inside the Folio remote \(remote.root)"), "\(error)")
        }
        let made = try TemporaryRemote()
        defer { made.remove() }
        let sub = FilePath(made.path("sub"))
        try FileManager.default.createDirectory(atPath: sub.string, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: sub.string + "/a.txt", contents: Data("a".utf8)))
        XCTAssertThrowsError(try LocalProvider.prepareRemote(at: sub)) { error in
            XCTAssertTrue("\(error)".contains("inside the Folio remote"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: sub.string + "/.folio"), "nothing written there")

        // A `.folio` that is not Folio's.
        let plain = try TemporaryRemote(initialize: false)
        defer { plain.remove() }
        XCTAssertTrue(FileManager.default.createFile(atPath: plain.root.string + "/.folio", contents: Data("x".utf8)))
        XCTAssertTrue(FileManager.default.createFile(atPath: plain.root.string + "/doc.txt", contents: Data()))
        XCTAssertThrowsError(try LocalProvider.prepareRemote(at: plain.root)) { error in
            XCTAssertTrue("\(error)".contains("is not Folio's"), "\(error)")
        }
        XCTAssertEqual(try String(contentsOfFile: plain.root.string + "/.folio", encoding: .utf8), "x")
    }

    func testAnEmptyFolderBecomesANewRemoteAndAFullOneIsAdopted() throws {
        let plain = try TemporaryRemote(initialize: false)
        defer { plain.remove() }
        try LocalProvider.prepareRemote(at: plain.root)
        XCTAssertTrue(FileManager.default.fileExists(atPath: plain.root.string + "/.folio-remote.json"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: plain.root.string + "/com.folio.drive"))
        // Adopted once, recognized as adopted afterwards (same identity).
        let id = LocalProvider.remoteID(at: remote.root)
        try LocalProvider.prepareRemote(at: remote.root)
        XCTAssertEqual(LocalProvider.remoteID(at: remote.root), id)
    }

    func testAnAdoptedFolderReplacedByAnotherIsOfflineAndNothingIsWrittenThere() async throws {
        let provider = try remote.provider()
        let before = try await provider.enumerateItems(in: .drive).items
        let root = remote.root.string
        defer { try? FileManager.default.removeItem(atPath: root + "-away") }
        try FileManager.default.moveItem(atPath: root, toPath: root + "-away")
        // A copy of the documents without Folio's folder (a backup restored, a share not mounted…).
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        try Data("copy\n".utf8).write(to: URL(fileURLWithPath: root + "/existing.txt"))
        for call in ["enumerate", "create"] {
            do {
                if call == "enumerate" {
                    _ = try await provider.enumerateItems(in: .drive)
                } else {
                    _ = try await provider.createItem(remote.template("new.txt"), contents: nil)
                }
                XCTFail("\(call) worked on a folder that is not the remote")
            } catch FolioError.offline(let message) {
                XCTAssertTrue(message.contains("is not the remote any more (no .folio/manifest.json"), message)
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), ["existing.txt"], "nothing written")

        // Another adopted folder in its place is another remote.
        try LocalProvider.adopt(at: remote.root)
        do {
            _ = try await provider.enumerateItems(in: .drive)
            XCTFail("another adopted folder was taken for this one")
        } catch FolioError.offline(let message) {
            XCTAssertTrue(message.contains("holds another remote"), message)
        }

        // Back: the same items, under the same ids.
        try FileManager.default.removeItem(atPath: root)
        try FileManager.default.moveItem(atPath: root + "-away", toPath: root)
        let after = try await provider.enumerateItems(in: .drive).items
        XCTAssertEqual(Set(after.map(\.id)), Set(before.map(\.id)))
    }

    // MARK: Helpers

    /// The `user.*` attributes of everything in the folder but `.folio`, as `getfattr` prints them.
    private func userAttributes() -> String {
        let script = "cd '\(remote.root.string)' && find . -path ./.folio -prune -o -print0 "
            + "| xargs -0 getfattr -h -d -m - --absolute-names 2>/dev/null"
        return run(script)
    }

    /// Runs `bash -c script`; returns its standard output.
    private func run(_ script: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        let out = Pipe()
        process.standardOutput = out
        do {
            try process.run()
        } catch {
            XCTFail("cannot run \(script): \(error)")
            return ""
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The ids of the Drive's items by name, as a new provider reports them after a scan (ids come from the
    /// folder and the id map on disk, read again when it changed; a second process sees the same:
    /// `AdoptedFolderTests` mounts the folder from two daemons).
    private static func idsByName(in root: FilePath) async throws -> [String: String] {
        let items = try await LocalProvider(root: root).enumerateItems(in: .drive).items
        return Dictionary(items.map { ($0.name, $0.id.rawValue) }, uniquingKeysWith: { first, _ in first })
    }

    /// In an adopted folder the app containers live inside the Drive's folder: a change by hand in one of them is
    /// reported to that container even when the Drive asks for its changes first.
    func testAChangeByHandInAnAppContainerIsItsOwnNotTheDrives() async throws {
        let provider = try remote.provider()
        defer { provider.stopWatching() }
        let notes = TemporaryRemote.notes.id
        _ = try await provider.createItem(
            remote.template("note.txt", in: notes), contents: try remote.contentFile("first"))
        _ = try await provider.enumerateWholeFolder(nil, in: notes)
        _ = try await provider.enumerateWholeFolder(nil, in: .drive)
        var driveAnchor = try await provider.currentAnchor(in: .drive)
        var notesAnchor = try await provider.currentAnchor(in: notes)
        driveAnchor = try await provider.changes(in: .drive, since: driveAnchor).anchor
        notesAnchor = try await provider.changes(in: notes, since: notesAnchor).anchor

        for round in 0..<5 {
            try remote.writeByHand("edited by hand \(round)", to: "note.txt", in: notes)
            let drive = try await provider.changes(in: .drive, since: driveAnchor)
            driveAnchor = drive.anchor
            XCTAssertFalse(drive.updated.contains { $0.name == "note.txt" }, "not the Drive's")
            let changes = try await provider.changes(in: notes, since: notesAnchor)
            notesAnchor = changes.anchor
            XCTAssertEqual(
                changes.updated.first { $0.name == "note.txt" }?.size, Int64("edited by hand \(round)".utf8.count),
                "round \(round): the app container's own change")
        }
    }
}
