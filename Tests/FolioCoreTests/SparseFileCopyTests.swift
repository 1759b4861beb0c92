import FolioCore
import Foundation
import XCTest

/// `SparseFile` on real files: copies leave holes, `SEEK_DATA`/`SEEK_HOLE` answers, `fallocate` modes.
final class SparseFileCopyTests: XCTestCase {
    private var folder: String!

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "sparse-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { [folder] in try? FileManager.default.removeItem(atPath: folder!) }
    }

    /// A new file open for reading and writing.
    private func makeFile(_ name: String) throws -> Int32 {
        let fd = open(folder + "/" + name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
        addTeardownBlock { close(fd) }
        return fd
    }

    private func write(_ text: String, to fd: Int32, at offset: Int64) {
        let written = Array(text.utf8).withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        XCTAssertEqual(written, text.utf8.count)
    }

    private func status(_ fd: Int32) -> stat {
        var result = stat()
        fstat(fd, &result)
        return result
    }

    func testCopyKeepsHolesAndDataAtBothEnds() throws {
        let source = try makeFile("source")
        let gigabyte: Int64 = 1 << 30
        write("head", to: source, at: 0)
        write("tail", to: source, at: gigabyte)
        XCTAssertEqual(ftruncate(source, off_t(2 * gigabyte)), 0)
        let copy = try makeFile("copy")
        try SparseFile.copy(from: source, to: copy, size: 2 * gigabyte)
        XCTAssertEqual(status(copy).st_size, Int(2 * gigabyte))
        XCTAssertLessThan(status(copy).st_blocks, 1024, "the copy filled the holes")
        var bytes = [UInt8](repeating: 0xff, count: 4)
        XCTAssertEqual(pread(copy, &bytes, 4, 0), 4)
        XCTAssertEqual(bytes, Array("head".utf8))
        XCTAssertEqual(pread(copy, &bytes, 4, off_t(gigabyte)), 4)
        XCTAssertEqual(bytes, Array("tail".utf8))
        XCTAssertEqual(pread(copy, &bytes, 4, off_t(gigabyte / 2)), 4)
        XCTAssertEqual(bytes, [0, 0, 0, 0])
    }

    /// A copy whose length is already right does not truncate the copy: ext4 writes a file truncated to its
    /// own length back to the disk at its close (a disk write for every new file's first write, which copies
    /// the empty version). Seen through a descriptor that cannot be truncated (read-only).
    func testCopyOfNothingDoesNotTruncateTheNewFile() throws {
        let source = try makeFile("empty")
        _ = try makeFile("copy")
        let readOnly = open(folder + "/copy", O_RDONLY | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(readOnly, 0)
        defer { close(readOnly) }
        XCTAssertNotEqual(ftruncate(readOnly, 0), 0, "the test needs a descriptor that cannot be truncated")
        XCTAssertNoThrow(try SparseFile.copy(from: source, to: readOnly, size: 0))
        XCTAssertEqual(status(readOnly).st_size, 0)
    }

    func testSeekFindsDataAndHolesAsLinuxDoes() throws {
        let fd = try makeFile("holes")
        let offset: Int64 = 1 << 24
        write(String(repeating: "x", count: 4096), to: fd, at: offset)
        let size = offset + (1 << 20)
        XCTAssertEqual(ftruncate(fd, off_t(size)), 0)
        XCTAssertEqual(SparseFile.seek(in: fd, to: .data, from: 0, size: size), offset)
        XCTAssertEqual(SparseFile.seek(in: fd, to: .hole, from: 0, size: size), 0)
        XCTAssertEqual(SparseFile.seek(in: fd, to: .hole, from: offset, size: size), offset + 4096)
        XCTAssertNil(SparseFile.seek(in: fd, to: .data, from: offset + 4096, size: size), "no data after the last")
        XCTAssertNil(SparseFile.seek(in: fd, to: .hole, from: size, size: size), "at the end: ENXIO")
        XCTAssertEqual(SparseFile.dataRange(in: fd, from: 0, size: size), offset..<(offset + 4096))
    }

    func testSpaceChanges() throws {
        let fd = try makeFile("space")
        try SparseFile.apply(.allocate(keepSize: false), to: fd, offset: 0, length: 1 << 20)
        XCTAssertEqual(status(fd).st_size, 1 << 20)
        try SparseFile.apply(.allocate(keepSize: true), to: fd, offset: 1 << 20, length: 1 << 20)
        XCTAssertEqual(status(fd).st_size, 1 << 20, "keep-size grew the file")
        XCTAssertGreaterThanOrEqual(status(fd).st_blocks, (2 << 20) / 512)
        write(String(repeating: "x", count: 8192), to: fd, at: 0)
        try SparseFile.apply(.punchHole, to: fd, offset: 0, length: 4096)
        var bytes = [UInt8](repeating: 0xff, count: 8192)
        XCTAssertEqual(pread(fd, &bytes, 8192, 0), 8192)
        XCTAssertEqual(Array(bytes[0..<4096]), [UInt8](repeating: 0, count: 4096))
        XCTAssertEqual(Array(bytes[4096...]), [UInt8](repeating: 0x78, count: 4096))
        XCTAssertThrowsError(try SparseFile.apply(.punchHole, to: fd, offset: -1, length: 1))
    }
}
