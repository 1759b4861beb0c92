import FolioCore
import Glibc
import SystemPackage

/// Copies content between file descriptors in chunks, holes left as holes: reports progress after each chunk,
/// stops with `.interrupted` when the task is cancelled, and paces itself to a simulated bandwidth.
struct ContentCopier: Sendable {
    /// Bytes per second to pace to; 0 copies at full speed.
    var bandwidthBytesPerSecond: Int64
    /// The link the pace is shared on (every transfer of one direction), or `nil` to pace this copy alone.
    var link: SimulatedLink? = nil

    /// The chunk size at full speed.
    static let fullSpeedChunkSize = 1 << 20

    /// The chunk size: 1 MiB at full speed; about an eighth of a second's worth when paced, so progress and
    /// cancellation stay responsive on a slow simulated link.
    var chunkSize: Int {
        guard bandwidthBytesPerSecond > 0 else { return Self.fullSpeedChunkSize }
        return Int(min(max(bandwidthBytesPerSecond / 8, 4096), Int64(Self.fullSpeedChunkSize)))
    }

    /// Copies `source` (from its start) into the empty file `destination` at the same offsets, data ranges
    /// only, and gives `destination` the same length: the holes of a sparse file stay holes (found with
    /// `SEEK_DATA`/`SEEK_HOLE`; a hole counts as copied in the progress, and takes no simulated bandwidth).
    /// Returns the length. `what` names the copy in errors.
    func copy(
        from source: FileDescriptor, to destination: FileDescriptor, what: String,
        progress: (Int64) -> Void
    ) async throws -> Int64 {
        var status = stat()
        guard fstat(source.rawValue, &status) == 0 else { throw FolioError.system(Errno(rawValue: errno), what) }
        let size = Int64(status.st_size)
        var pacing = Pacing(bandwidth: bandwidthBytesPerSecond, link: link)
        var offset: Int64 = 0
        while let range = SparseFile.dataRange(in: source.rawValue, from: offset, size: size) {
            if range.lowerBound > offset { progress(range.lowerBound) }
            try await copyRange(range, from: source, to: destination, what: what, pacing: &pacing, progress: progress)
            offset = range.upperBound
        }
        guard ftruncate(destination.rawValue, off_t(size)) == 0 else {
            throw FolioError.system(Errno(rawValue: errno), what)
        }
        progress(size)
        return size
    }

    /// Copies one data range in the kernel (``SparseFile/copyRange(_:from:to:)``): in 8 MiB steps at full speed,
    /// in steps of ``chunkSize`` when paced.
    func copyRange(
        _ range: Range<Int64>, from source: FileDescriptor, to destination: FileDescriptor, what: String,
        pacing: inout Pacing, progress: (Int64) -> Void
    ) async throws {
        var position = range.lowerBound
        let step = bandwidthBytesPerSecond == 0 ? Int64(8 << 20) : Int64(chunkSize)
        while position < range.upperBound {
            if Task.isCancelled { throw FolioError.interrupted("\(what) cancelled after \(position) bytes") }
            let chunk = position..<min(range.upperBound, position + step)
            try SparseFile.copyRange(chunk, from: source.rawValue, to: destination.rawValue)
            position = chunk.upperBound
            progress(position)
            try await pacing.wait(after: Int64(chunk.count), what: what)
        }
    }
}

/// Paces a copy to a simulated bandwidth: after each chunk, waits until the bytes copied so far are due, on the
/// provider's shared ``SimulatedLink`` (concurrent calls divide the bandwidth) or, without one, on its own.
struct Pacing {
    let bandwidth: Int64
    /// The shared link, if the copy is paced on one (see ``SimulatedLink``).
    let link: SimulatedLink?
    let clock = ContinuousClock()
    let start: ContinuousClock.Instant
    var copied: Int64 = 0

    init(bandwidth: Int64, link: SimulatedLink? = nil) {
        self.bandwidth = bandwidth
        self.link = link
        start = clock.now
    }

    mutating func wait(after count: Int64, what: String) async throws {
        copied += count
        guard bandwidth > 0 else { return }
        if let link { return try await link.transfer(count, bandwidth: bandwidth, what: what) }
        do {
            try await Task.sleep(until: start + .seconds(Double(copied) / Double(bandwidth)), clock: clock)
        } catch {
            throw FolioError.interrupted("\(what) cancelled after \(copied) bytes")
        }
    }
}
