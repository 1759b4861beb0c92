import FolioCore
@testable import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// The demo remote: its containers, documents, images and large file.
final class SampleRemoteTests: XCTestCase {
    private var remote: TemporaryRemote!

    override func setUpWithError() throws {
        remote = try TemporaryRemote(initialize: false)
    }

    override func tearDownWithError() throws {
        remote.remove()
    }

    func testDefaultLargeFileIsAtLeast64MiB() {
        XCTAssertGreaterThanOrEqual(SampleRemote.defaultLargeFileSize, 64 << 20)
    }

    func testCreatesContainersDocumentsImagesAndTheLargeFile() async throws {
        let largeSize: Int64 = (3 << 20) + 5
        try SampleRemote.create(at: remote.root, largeFileSize: largeSize)
        let provider = try LocalProvider(root: remote.root)

        let containers = try await provider.listContainers()
        XCTAssertEqual(containers, [
            Container.drive,
            Container(id: ContainerID("com.example.notes"), displayName: "Notes", isPublic: true),
            Container(id: ContainerID("com.example.secret"), displayName: "Secret", isPublic: false),
        ])

        let drive = try await provider.enumerateItems(in: .drive).items
        let byID = Dictionary(uniqueKeysWithValues: drive.map { ($0.id, $0) })
        func path(of item: RemoteItem) -> String {
            var components = [item.name]
            var parent = item.parentID
            while let current = parent, let folder = byID[current] {
                components.insert(folder.name, at: 0)
                parent = folder.parentID
            }
            return components.joined(separator: "/")
        }
        let paths = Dictionary(uniqueKeysWithValues: drive.map { (path(of: $0), $0) })
        for expected in [
            "README.md", "Projects/2026/plan.md", "Projects/2026/budget.csv", "Documents/letter.txt",
            "Pictures/sunrise-gradient.png", "Pictures/checkerboard.png", "Pictures/folio-logo.svg",
        ] {
            XCTAssertEqual(paths[expected]?.kind, .file, "\(expected) missing from \(paths.keys.sorted())")
        }
        XCTAssertEqual(paths["Projects/current-plan.md"]?.symlinkTarget, "2026/plan.md")
        XCTAssertEqual(paths[SampleRemote.largeFilePath]?.size, largeSize)

        for item in drive where item.kind != .symlink {
            var itemPath = remote.root.appending("com.folio.drive")
            for component in path(of: item).split(separator: "/") { itemPath.append(String(component)) }
            XCTAssertEqual(
                try StoredAttributes.read(itemPath).id, item.id,
                "\(path(of: item)) has no stored id"
            )
        }

        let notes = try await provider.enumerateItems(in: ContainerID("com.example.notes")).items
        XCTAssertTrue(notes.contains { $0.name == "sunset.png" })
        XCTAssertTrue(notes.contains { $0.name == "01-15.md" })
        let secret = try await provider.enumerateItems(in: ContainerID("com.example.secret")).items
        XCTAssertTrue(secret.contains { $0.name == "diary.md" })

        let large = try XCTUnwrap(paths[SampleRemote.largeFilePath])
        let destination = try remote.destination()
        let fetched = try await provider.fetchContents(
            of: large.id, in: .drive, version: large.version, to: destination
        ) { _ in }
        XCTAssertEqual(fetched.size, largeSize)
        let content = try Data(contentsOf: URL(fileURLWithPath: destination.string))
        XCTAssertEqual(Int64(content.count), largeSize)
        XCTAssertNotEqual(content.prefix(1 << 20), content.dropFirst(1 << 20).prefix(1 << 20), "chunks repeat")
    }

    func testCreateRunsOnce() async throws {
        try SampleRemote.create(at: remote.root, largeFileSize: 1024)
        let before = try await LocalProvider(root: remote.root).enumerateItems(in: .drive).items
        try FileManager.default.removeItem(atPath: remote.path("README.md"))
        try SampleRemote.create(at: remote.root, largeFileSize: 1024)
        let after = try await LocalProvider(root: remote.root).enumerateItems(in: .drive).items
        XCTAssertEqual(after.count, before.count - 1, "a second create should do nothing")
    }

    func testRefusesANonEmptyDirectoryThatIsNotARemote() throws {
        try Data("mine".utf8).write(to: URL(fileURLWithPath: remote.root.appending("thesis.tex").string))
        XCTAssertThrowsError(try SampleRemote.create(at: remote.root, largeFileSize: 1024))
    }

    func testImagesArePNGFilesThatDecode() throws {
        try SampleRemote.create(at: remote.root, largeFileSize: 1024)
        for relative in ["Pictures/sunrise-gradient.png", "Pictures/checkerboard.png"] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: remote.path(relative))))
            try assertValidPNG(bytes, relative)
        }
        let small = PNGEncoder.encode(width: 300, height: 100) { x, y in (UInt8(x % 256), UInt8(y), 7) }
        try assertValidPNG(small, "a PNG with several stored blocks")
    }

    func testChecksumsMatchKnownValues() {
        XCTAssertEqual(PNGEncoder.crc32(Array("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(PNGEncoder.adler32(Array("Wikipedia".utf8)), 0x11E6_0398)
    }

    /// Walks the chunks (checking every CRC) and inflates the stored blocks (checking Adler-32 and size).
    private func assertValidPNG(_ bytes: [UInt8], _ what: String) throws {
        XCTAssertEqual(Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], what)
        func readUInt32(_ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        var offset = 8
        var width = 0
        var height = 0
        var compressed: [UInt8] = []
        var types: [String] = []
        while offset < bytes.count {
            let length = Int(readUInt32(offset))
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let body = Array(bytes[offset + 4..<offset + 8 + length])
            XCTAssertEqual(PNGEncoder.crc32(body), readUInt32(offset + 8 + length), "\(what): CRC of \(type)")
            let data = Array(body.dropFirst(4))
            if type == "IHDR" {
                width = Int(data[0..<4].reduce(0) { $0 << 8 | UInt32($1) })
                height = Int(data[4..<8].reduce(0) { $0 << 8 | UInt32($1) })
            }
            if type == "IDAT" { compressed += data }
            types.append(type)
            offset += 12 + length
        }
        XCTAssertEqual(types, ["IHDR", "IDAT", "IEND"], what)
        var raw: [UInt8] = []
        var position = 2
        var isLast = false
        while !isLast {
            isLast = compressed[position] & 1 == 1
            XCTAssertEqual(compressed[position] >> 1, 0, "\(what): not a stored block")
            let length = Int(compressed[position + 1]) | Int(compressed[position + 2]) << 8
            let complement = Int(compressed[position + 3]) | Int(compressed[position + 4]) << 8
            XCTAssertEqual(length ^ 0xFFFF, complement, "\(what): block length check")
            raw += compressed[position + 5..<position + 5 + length]
            position += 5 + length
        }
        let adler = compressed[position..<position + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        XCTAssertEqual(adler, PNGEncoder.adler32(raw), "\(what): Adler-32")
        XCTAssertEqual(raw.count, height * (1 + width * 3), "\(what): image data size")
    }
}
