import FolioCore
import Glibc
import SystemPackage

extension ContentCopier {
    /// Copies bytes `range` of `source` to the same offsets of `destination` (the range is cut at the end of
    /// `source`), leaving every other byte of `destination` as it is and its length at least as long as it was.
    /// Data is copied, holes stay holes: a hole of `source` within the range is punched into `destination` where
    /// it holds data there (zeros written where punching is not supported). Paced to the simulated bandwidth,
    /// progress is the number of bytes of the range done (a hole counts without taking bandwidth). Returns the
    /// range copied.
    func copy(
        _ range: Range<Int64>, from source: FileDescriptor, to destination: FileDescriptor, what: String,
        progress: (Int64) -> Void
    ) async throws -> Range<Int64> {
        var status = stat()
        guard fstat(source.rawValue, &status) == 0 else { throw FolioError.system(Errno(rawValue: errno), what) }
        let size = Int64(status.st_size)
        let wanted = min(range.lowerBound, size)..<min(range.upperBound, size)
        var pacing = Pacing(bandwidth: bandwidthBytesPerSecond, link: link)
        var offset = wanted.lowerBound
        while offset < wanted.upperBound {
            let data = SparseFile.dataRange(in: source.rawValue, from: offset, size: wanted.upperBound)
            let dataStart = data?.lowerBound ?? wanted.upperBound
            if dataStart > offset {
                try Self.clear(offset..<dataStart, of: destination, what: what)
                progress(dataStart - wanted.lowerBound)
            }
            guard let data else { break }
            try await copyRange(data, from: source, to: destination, what: what, pacing: &pacing) { position in
                progress(position - wanted.lowerBound)
            }
            offset = data.upperBound
        }
        progress(Int64(wanted.count))
        return wanted
    }

    /// Makes bytes `range` of `destination` read as zeros without allocating them where they are not allocated:
    /// holes already there are left alone, data is punched out (or overwritten with zeros).
    private static func clear(_ range: Range<Int64>, of destination: FileDescriptor, what: String) throws {
        var offset = range.lowerBound
        while let data = SparseFile.dataRange(in: destination.rawValue, from: offset, size: range.upperBound) {
            do {
                try SparseFile.apply(
                    .punchHole, to: destination.rawValue, offset: data.lowerBound, length: Int64(data.count))
            } catch FolioError.notSupported {
                try writeZeros(data, to: destination, what: what)
            }
            offset = data.upperBound
        }
    }

    /// Writes zeros over `range` of `destination`.
    private static func writeZeros(_ range: Range<Int64>, to destination: FileDescriptor, what: String) throws {
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        var position = range.lowerBound
        while position < range.upperBound {
            let count = Int(min(Int64(zeros.count), range.upperBound - position))
            let written = zeros.withUnsafeBytes { pwrite(destination.rawValue, $0.baseAddress, count, off_t(position)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw FolioError.system(Errno(rawValue: errno), what)
            }
            position += Int64(written)
        }
    }
}
