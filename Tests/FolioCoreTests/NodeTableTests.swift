@testable import FolioCore
import FolioTesting
import XCTest

/// ``NodeTable``'s running figures (bytes of content kept, pinned nodes, counts by state) always equal what a
/// walk of every node finds, whatever writes went through it: the content keeper and `folio status` read the
/// figures instead of walking a million nodes under the core's lock.
final class NodeTableTests: XCTestCase {
    private func randomNode(_ ino: UInt64, _ random: inout SeededRandom) -> Node {
        let kind: ItemKind = Int.random(in: 0..<4, using: &random) == 0 ? .directory : .file
        let content = kind == .file ? [nil, ContentCache.emptyVersion, "v\(ino)-\(Int.random(in: 0..<9, using: &random))"]
            .randomElement(using: &random)! : nil
        return Node(
            ino: ino, itemID: ItemID("i\(ino)"), container: .drive, parent: 1, name: "n\(ino)", kind: kind,
            size: kind == .file ? Int64.random(in: 0..<10_000, using: &random) : 0, modificationTime: .now(),
            mode: 0o644, state: content == nil ? .placeholder : .materialized, contentFile: content,
            remoteVersion: "r", pinned: Bool.random(using: &random), childrenListed: Bool.random(using: &random))
    }

    func testTheRunningFiguresEqualAWalkAfterEveryWrite() {
        for seed in 1...20 {
            var random = SeededRandom(seed: UInt64(seed))
            var table = NodeTable()
            for step in 0..<400 {
                let ino = UInt64.random(in: 2..<60, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: table[ino] = nil
                case 1: _ = table.removeValue(forKey: ino)
                default: table[ino] = randomNode(ino, &random)
                }
                let walked = Array(table.values)
                let bytes = walked.reduce(0) { $0 + $1.cachedContentSize }
                XCTAssertEqual(table.cachedBytes, bytes, "seed \(seed), step \(step)")
                XCTAssertEqual(table.pinned, Set(walked.filter(\.pinned).map(\.ino)), "seed \(seed), step \(step)")
                guard table.cachedBytes == bytes else { return }  // (one failure says it)
            }
        }
    }

    /// A node that changes in place (a pin taken back, content dropped) moves the figures with it.
    func testAChangedNodeMovesTheFigures() {
        var table = NodeTable()
        var node = Node(
            ino: 5, itemID: ItemID("five"), container: .drive, parent: 1, name: "five", kind: .file, size: 300,
            modificationTime: .now(), mode: 0o644, state: .materialized, contentFile: "v5", remoteVersion: "r",
            pinned: true)
        table[5] = node
        XCTAssertEqual(table.cachedBytes, 300)
        XCTAssertEqual(table.pinned, [5])
        node.pinned = false
        node.size = 1_000
        table[5] = node
        XCTAssertEqual(table.cachedBytes, 1_000)
        XCTAssertEqual(table.pinned, [])
        node.contentFile = nil
        table[5] = node
        XCTAssertEqual(table.cachedBytes, 0)
        _ = table.removeValue(forKey: 5)
        XCTAssertEqual(table.cachedBytes, 0)
        XCTAssertEqual(table.count, 0)
    }
}
