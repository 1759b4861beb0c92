import FolioCore
import Foundation
import SystemPackage

extension ProviderConformance {
    // MARK: Ranged fetch

    /// See ``Check/rangedFetch``.
    func checkRangedFetch(_ space: ConformanceWorkspace) async throws {
        var random = SeededRandom(seed: 0xFE7C4)
        let bytes = random.bytes((3 << 20) + 4321)
        let size = Int64(bytes.count)
        let file = try await space.createFile("ranges.bin", bytes)

        // A range in the middle lands at its own offsets; every other byte of the destination stays as it was.
        let marker: UInt8 = 0xEE
        let destination = try space.scratchFile([UInt8](repeating: marker, count: bytes.count + 100))
        let middle: Range<Int64> = (1 << 20) + 7..<(2 << 20) + 100
        let recorder = ProgressRecorder()
        let fetched = try await space.provider.fetchContents(
            of: file.id, in: file.container, version: file.version, range: middle, to: destination,
            progress: { recorder.record($0) })
        try space.expect(
            fetched.id == file.id && fetched.version == file.version, "ranged fetch returned \(fetched)")
        var expected = [UInt8](repeating: marker, count: bytes.count + 100)
        let middleIndices = Int(middle.lowerBound)..<Int(middle.upperBound)
        expected.replaceSubrange(middleIndices, with: bytes[middleIndices])
        let after = try contents(of: destination, space)
        try space.expect(after.count == expected.count, "the destination's length changed to \(after.count)")
        try space.expect(after == expected, "bytes \(firstDifference(after, expected)) of the destination are wrong")
        let progress = recorder.values
        try space.expect(!progress.isEmpty, "a ranged fetch reported no progress")
        try space.expect(progress == progress.sorted(), "progress went backwards: \(progress)")
        try space.expect(
            progress.last == Int64(middle.count), "last progress \(progress.last ?? -1), range of \(middle.count)")

        // A range past the end is cut at the file's size, into a destination that did not exist.
        let tail = space.scratch.appending("tail-\(UUID().uuidString)")
        let tailRecorder = ProgressRecorder()
        _ = try await space.provider.fetchContents(
            of: file.id, in: file.container, version: file.version, range: size - 1000..<size + 5000, to: tail,
            progress: { tailRecorder.record($0) })
        let tailBytes = try contents(of: tail, space)
        try space.expect(tailBytes.count == bytes.count, "a cut range made a file of \(tailBytes.count) bytes")
        try space.expect(
            Array(tailBytes[(bytes.count - 1000)...]) == Array(bytes[(bytes.count - 1000)...]),
            "the last bytes fetched by a range past the end are wrong")
        try space.expect(
            tailRecorder.values.allSatisfy { $0 <= 1000 }, "progress beyond the cut range: \(tailRecorder.values)")
        let beyond = space.scratch.appending("beyond-\(UUID().uuidString)")
        _ = try await space.provider.fetchContents(
            of: file.id, in: file.container, version: file.version, range: size + 10..<size + 20, to: beyond,
            progress: { _ in })
        try space.expect(
            (try? contents(of: beyond, space).count) ?? 0 == 0, "a range wholly past the end wrote bytes")

        // Another version is a conflict, and writes nothing.
        let changed = try await space.provider.modifyItem(
            file.id, in: space.container, baseVersion: file.version, changes: RemoteItemChanges(),
            contents: try space.scratchFile(random.bytes(bytes.count)))
        let untouched = try space.scratchFile([UInt8](repeating: marker, count: 4096))
        try await space.expectError(.conflict, "ranged fetch of a version the item is no longer at") {
            _ = try await space.provider.fetchContents(
                of: file.id, in: file.container, version: file.version, range: 0..<4096, to: untouched,
                progress: { _ in })
        }
        try space.expect(
            try contents(of: untouched, space) == [UInt8](repeating: marker, count: 4096),
            "a refused ranged fetch changed the destination")
        _ = try await space.provider.fetchContents(
            of: file.id, in: file.container, version: changed.version, range: 0..<4096, to: untouched,
            progress: { _ in })
    }

    /// The bytes of a local file.
    private func contents(of path: FilePath, _ space: ConformanceWorkspace) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path.string) else {
            throw space.failure("no file at \(path)")
        }
        return [UInt8](data)
    }

    /// Where two byte arrays first differ (for messages).
    private func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String {
        let index = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        return "from \(index)"
    }
}
