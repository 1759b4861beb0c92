import FolioCore
import FolioProviderWebDAV
import FolioTestServers
import Foundation
import SystemPackage
import XCTest

/// A big file goes up streamed from its version file and comes down streamed into the cache, never held in
/// memory: the test process's peak resident size grows by far less than the file.
final class WebDAVLargeFileTests: ApacheProviderTestCase {
    private var folder: URL { fixture.state }

    /// The peak resident size of this process since the last reset, in bytes.
    private func peakResident() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// Starts measuring the peak again from now (`clear_refs` 5, Linux).
    private func resetPeak() throws {
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// The uploader hands a version file over as `/proc/self/fd/N`: its content is sent whole, not the link's.
    func testContentGivenAsAnOpenDescriptorsPathIsSentWhole() async throws {
        let source = folder.appendingPathComponent("doc.txt")
        let content = Data(repeating: 0x61, count: 100_000)
        try content.write(to: source)
        let descriptor = try FileDescriptor.open(FilePath(source.path), .readOnly)
        defer { try? descriptor.close() }
        let provider = try fixture.provider()
        _ = try await provider.listContainers()
        let item = try await provider.createItem(
            RemoteItemTemplate(
                id: .generate(), container: .drive, parentID: nil, name: "doc.txt", kind: .file,
                modificationTime: .now(), mode: 0o644),
            contents: FilePath("/proc/self/fd/\(descriptor.rawValue)"))
        XCTAssertEqual(item.size, Int64(content.count))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fixture.driveFile("doc.txt"))),
            content)
        await provider.shutdown()
    }

    func testABigFileIsStreamedBothWays() async throws {
        let size = 192 << 20
        let source = folder.appendingPathComponent("big.bin")
        // Content with a pattern per MiB, so a misplaced range shows.
        XCTAssertTrue(FileManager.default.createFile(atPath: source.path, contents: nil))
        let handle = try FileHandle(forWritingTo: source)
        for mebibyte in 0..<(size >> 20) {
            try handle.write(contentsOf: Data(repeating: UInt8(truncatingIfNeeded: mebibyte &* 37 &+ 11), count: 1 << 20))
        }
        try handle.close()
        let provider = try fixture.provider()
        _ = try await provider.listContainers()

        try resetPeak()
        let base = try peakResident()
        let item = try await provider.createItem(
            RemoteItemTemplate(
                id: .generate(), container: .drive, parentID: nil, name: "big.bin", kind: .file,
                modificationTime: .now(), mode: 0o644),
            contents: FilePath(source.path))
        XCTAssertEqual(item.size, Int64(size))
        let uploadGrowth = try peakResident() - base
        XCTAssertLessThan(uploadGrowth, 64 << 20, "the upload was held in memory (\(uploadGrowth >> 20) MiB)")

        try resetPeak()
        let downloaded = folder.appendingPathComponent("down.bin")
        _ = try await provider.fetchContents(
            of: item.id, in: .drive, version: item.version, to: FilePath(downloaded.path), progress: { _ in })
        let downloadGrowth = try peakResident() - base
        XCTAssertLessThan(downloadGrowth, 64 << 20, "the download was held in memory (\(downloadGrowth >> 20) MiB)")
        XCTAssertEqual(FileDigest.md5(downloaded.path), FileDigest.md5(source.path), "the bytes came back exact")

        // A range in the middle lands at its offsets, nothing else is written.
        let ranged = folder.appendingPathComponent("ranged.bin")
        let range: Range<Int64> = (100 << 20) + 123..<(101 << 20) + 7
        _ = try await provider.fetchContents(
            of: item.id, in: .drive, version: item.version, range: range, to: FilePath(ranged.path),
            progress: { _ in })
        let bytes = try Data(contentsOf: ranged)
        XCTAssertEqual(bytes.count, Int(range.upperBound), "written up to the range's end only")
        XCTAssertEqual(bytes[Int(range.lowerBound)], UInt8(truncatingIfNeeded: 100 &* 37 &+ 11))
        XCTAssertEqual(bytes[Int(range.upperBound) - 1], UInt8(truncatingIfNeeded: 101 &* 37 &+ 11))
        XCTAssertEqual(bytes[Int(range.lowerBound) - 1], 0, "nothing before the range")
        await provider.shutdown()
    }
}

/// Digests of files, by the system's tools.
enum FileDigest {
    /// The MD5 of a file, by `md5sum`.
    static func md5(_ path: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/md5sum")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try? process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }
}
