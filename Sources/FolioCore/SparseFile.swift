import Glibc
import SystemPackage

/// Sparse files: where a file holds data (`SEEK_DATA`/`SEEK_HOLE`), copies that leave the holes, and
/// `fallocate`. Every call here is positional: a descriptor's own offset is never relied upon.
public enum SparseFile {
    /// `lseek`'s "next data at or after": a Linux constant Glibc's Swift module does not export.
    static let seekData: Int32 = 3
    /// `lseek`'s "next hole at or after".
    static let seekHole: Int32 = 4

    /// `int fallocate(int fd, int mode, off_t offset, off_t len)`.
    private typealias Fallocate = @convention(c) (Int32, Int32, Int, Int) -> Int32
    /// `ssize_t copy_file_range(int, off_t *, int, off_t *, size_t, unsigned)`.
    private typealias CopyFileRange = @convention(c) (
        Int32, UnsafeMutablePointer<Int>?, Int32, UnsafeMutablePointer<Int>?, Int, UInt32
    ) -> Int

    /// `fallocate(2)`, which Glibc's Swift module does not export, resolved from the loaded C library.
    private static let fallocateFunction: Fallocate = resolve("fallocate")
    /// `copy_file_range(2)`, resolved likewise.
    private static let copyFileRangeFunction: CopyFileRange = resolve("copy_file_range")

    /// The first range of data at or after `offset` within the first `size` bytes of `fd`; `nil` when only a
    /// hole (or nothing) is left. A filesystem that cannot tell holes counts as data throughout.
    public static func dataRange(in fd: Int32, from offset: Int64, size: Int64) -> Range<Int64>? {
        guard offset < size else { return nil }
        let start = lseek(fd, off_t(offset), seekData)
        if start < 0 {
            return errno == ENXIO ? nil : offset..<size
        }
        guard Int64(start) < size else { return nil }
        let end = lseek(fd, start, seekHole)
        return Int64(start)..<(end < 0 ? size : min(Int64(end), size))
    }

    /// The offset `lseek(fd, offset, SEEK_DATA or SEEK_HOLE)` answers for a file of `size` bytes: `nil` (the
    /// caller answers `ENXIO`) when `offset` is at or past the end, or no data follows it.
    public static func seek(in fd: Int32, to target: SeekTarget, from offset: Int64, size: Int64) -> Int64? {
        guard offset >= 0, offset < size else { return nil }
        let range = dataRange(in: fd, from: offset, size: size)
        switch target {
        case .data:
            return range?.lowerBound
        case .hole:
            guard let range else { return offset }
            return range.lowerBound > offset ? offset : range.upperBound
        }
    }

    /// Copies the first `size` bytes of `source` into the empty file `destination` at the same offsets, data
    /// ranges only, and gives `destination` the length `size`: holes stay holes.
    public static func copy(from source: Int32, to destination: Int32, size: Int64) throws(FolioError) {
        var offset: Int64 = 0
        while let range = dataRange(in: source, from: offset, size: size) {
            try copyRange(range, from: source, to: destination)
            offset = range.upperBound
        }
        // Only where the length is not right yet: ext4 writes a file truncated to its own length (a new empty
        // file truncated to 0, the copy of the empty version that every new file's first write makes) back to
        // the disk when it is closed, as if it were replacing a file (`auto_da_alloc`): a disk write per file.
        var status = stat()
        guard fstat(destination, &status) != 0 || Int64(status.st_size) != size else { return }
        guard ftruncate(destination, off_t(size)) == 0 else {
            throw .system(Errno(rawValue: errno), "set the size of a copy")
        }
    }

    /// Copies bytes `range` of `source` to the same offsets of `destination`: in the kernel where it can, by
    /// hand where it cannot (a source shorter than `range` just ends the copy early).
    public static func copyRange(_ range: Range<Int64>, from source: Int32, to destination: Int32) throws(FolioError) {
        var position = Int(range.lowerBound)
        let end = Int(range.upperBound)
        while position < end {
            var from = position
            var to = position
            let count = copyFileRangeFunction(source, &from, destination, &to, min(end - position, 1 << 30), 0)
            if count > 0 {
                position += count
                continue
            }
            if count == 0 { return }
            let error = Errno(rawValue: errno)
            if error == .interrupted { continue }
            guard [.notSupported, .invalidArgument, .improperLink, .noFunction].contains(error) else {
                throw .system(error, "copy content")
            }
            try copyByHand(position..<end, from: source, to: destination)
            return
        }
    }

    private static func copyByHand(_ range: Range<Int>, from source: Int32, to destination: Int32) throws(FolioError) {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var position = range.lowerBound
        while position < range.upperBound {
            let wanted = min(buffer.count, range.upperBound - position)
            let count = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress, wanted, off_t(position)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(Errno(rawValue: errno), "read content to copy")
            }
            if count == 0 { return }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes {
                    pwrite(destination, $0.baseAddress! + written, count - written, off_t(position + written))
                }
                if step < 0 {
                    if errno == EINTR { continue }
                    throw .system(Errno(rawValue: errno), "write copied content")
                }
                written += step
            }
            position += count
        }
    }

    /// Applies `change` to bytes `offset..<offset + length` of `fd` (`fallocate(2)`).
    public static func apply(_ change: SpaceChange, to fd: Int32, offset: Int64, length: Int64) throws(FolioError) {
        let keepSize: Int32 = 0x01, punchHole: Int32 = 0x02, zeroRange: Int32 = 0x10
        let mode: Int32
        switch change {
        case .allocate(let keep): mode = keep ? keepSize : 0
        case .punchHole: mode = punchHole | keepSize
        case .zeroRange(let keep): mode = zeroRange | (keep ? keepSize : 0)
        }
        while fallocateFunction(fd, mode, Int(offset), Int(length)) != 0 {
            let error = Errno(rawValue: errno)
            if error == .interrupted { continue }
            if error == .notSupported { throw .notSupported("fallocate \(change) on the content cache") }
            throw .system(error, "fallocate")
        }
    }

    private static func resolve<Function>(_ symbol: String) -> Function {
        guard let address = dlsym(dlopen(nil, RTLD_NOW), symbol) else { fatalError("the C library lacks \(symbol)") }
        return unsafeBitCast(address, to: Function.self)
    }
}
