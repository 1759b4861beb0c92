import FolioCore
@testable import FolioProviderWebDAV
import Foundation
import XCTest

/// The journal's and the index's lines are written by hand and read by `JSONDecoder`: whatever a name holds,
/// what is read back is what was written.
final class JSONLineWriterTests: XCTestCase {
    /// Names a server may send: quotes, backslashes, every control character, non-ASCII, line separators.
    private let names = [
        "plain.txt", "with \"quotes\"", "back\\slash\\", "tab\tnew\nline\r", "café ☕️ 𝄞", "\u{2028}\u{2029}",
        "/", "{\"a\":1}", "\u{7f}", "",
    ] + (1..<0x20).map { "control \(String(UnicodeScalar(UInt8($0))))" }

    private func item(_ name: String, index: Int) -> RemoteItem {
        RemoteItem(
            id: ItemID("id-\(name)"), container: index.isMultiple(of: 2) ? .drive : ContainerID("com.example.\"app\""),
            parentID: index.isMultiple(of: 3) ? nil : ItemID("parent \(name)"), name: name,
            kind: index.isMultiple(of: 5) ? .symlink : .file, size: Int64(index) * 1_234_567_890_123,
            modificationTime: Timestamp(seconds: Int64(index) * -987_654_321, nanoseconds: Int64(index) * 7),
            mode: UInt32(index) * 0o111, symlinkTarget: index.isMultiple(of: 5) ? "target \(name)" : nil,
            version: "W/\"\(name)\"")
    }

    func testAnItemWrittenByHandReadsBackAsItWas() throws {
        for (index, name) in names.enumerated() {
            let item = item(name, index: index)
            var writer = JSONLineWriter()
            item.write(to: &writer)
            let line = Data(writer.bytes)
            XCTAssertFalse(writer.bytes.contains(UInt8(ascii: "\n")), "one line: \(name.debugDescription)")
            XCTAssertEqual(try JSONDecoder().decode(RemoteItem.self, from: line), item, name.debugDescription)
            // The same value JSONEncoder writes (keys in another order).
            let encoded = try JSONEncoder().encode(item)
            XCTAssertEqual(
                try JSONSerialization.jsonObject(with: line) as? NSDictionary,
                try JSONSerialization.jsonObject(with: encoded) as? NSDictionary, name.debugDescription)
        }
    }

    func testTheJournalAndTheIndexReadBackWhatTheyWrote() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("folio-lines-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = names.enumerated().map { item($1, index: $0) }
        let journalFile = folder.appendingPathComponent("journal")
        let indexFile = folder.appendingPathComponent("index")
        do {
            let journal = WebDAVJournal(file: journalFile)
            let index = ItemIndex(file: indexFile)
            for item in items {
                journal.took(listing: [item], of: item.parentID ?? .root(of: item.container), in: item.container,
                             startedAt: 0)
                var entry = ItemIndex.Entry(
                    container: item.container, parent: item.parentID, name: item.name, isFolder: false,
                    staged: item.kind == .symlink ? true : nil, pendingWrite: "tag \"\(item.name)\" ~1:ab")
                entry.movingTo = .init(container: item.container, parent: ItemID("to \(item.name)"), name: item.name)
                index.record(item.id, entry)
            }
        }
        let journal = WebDAVJournal(file: journalFile)
        let index = ItemIndex(file: indexFile)
        for item in items {
            XCTAssertEqual(journal.item(item.id, in: item.container), item, item.name.debugDescription)
            XCTAssertEqual(index.entry(item.id)?.name, item.name)
            XCTAssertEqual(index.entry(item.id)?.pendingWrite, "tag \"\(item.name)\" ~1:ab")
            XCTAssertEqual(index.entry(item.id)?.movingTo?.parent, ItemID("to \(item.name)"))
            XCTAssertEqual(index.entry(item.id)?.staged, item.kind == .symlink ? true : nil)
        }
    }
}
