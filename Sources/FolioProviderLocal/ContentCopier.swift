import FolioCore
import Glibc
import SystemPackage

/// Copies content between file descriptors in chunks: reports progress after each chunk, stops with
/// `.interrupted` when the task is cancelled, and paces itself to a simulated bandwidth.
struct ContentCopier: Sendable {
    /// Bytes per second to pace to; 0 copies at full speed.
    var bandwidthBytesPerSecond: Int64

    /// The chunk size at full speed.
    static let fullSpeedChunkSize = 1 << 20

    /// The chunk size: 1 MiB at full speed; about an eighth of a second's worth when paced, so progress and
    /// cancellation stay responsive on a slow simulated link.
    var chunkSize: Int {
        guard bandwidthBytesPerSecond > 0 else { return Self.fullSpeedChunkSize }
        return Int(min(max(bandwidthBytesPerSecond / 8, 4096), Int64(Self.fullSpeedChunkSize)))
    }

    /// Copies everything from `source`'s current offset to its end into `destination`; returns the number of
    /// bytes copied. `what` names the copy in errors.
    func copy(
        from source: FileDescriptor, to destination: FileDescriptor, what: String,
        progress: (Int64) -> Void
    ) async throws -> Int64 {
        if bandwidthBytesPerSecond == 0, let copied = try copyInKernel(from: source, to: destination, what: what,
                                                                         progress: progress) {
            return copied
        }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        let clock = ContinuousClock()
        let start = clock.now
        var copied: Int64 = 0
        while true {
            if Task.isCancelled { throw FolioError.interrupted("\(what) cancelled after \(copied) bytes") }
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try source.read(into: $0, retryOnInterrupt: true) }
                if count == 0 { break }
                _ = try buffer.withUnsafeBytes {
                    try destination.writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<count]))
                }
            } catch let error as Errno {
                throw FolioError.system(error, what)
            }
            copied += Int64(count)
            progress(copied)
            if bandwidthBytesPerSecond > 0 {
                let due = start + .seconds(Double(copied) / Double(bandwidthBytesPerSecond))
                do {
                    try await Task.sleep(until: due, clock: clock)
                } catch {
                    throw FolioError.interrupted("\(what) cancelled after \(copied) bytes")
                }
            }
        }
        if copied == 0 { progress(0) }
        return copied
    }

    /// At full speed: `copy_file_range` in 8 MiB steps (the kernel copies without a round trip through this
    /// process's memory, and shares blocks where the filesystem can). `nil` when the kernel cannot do it for
    /// these descriptors (different filesystems on old kernels, special files): the caller copies by hand.
    private func copyInKernel(
        from source: FileDescriptor, to destination: FileDescriptor, what: String, progress: (Int64) -> Void
    ) throws -> Int64? {
        var copied: Int64 = 0
        while true {
            if Task.isCancelled { throw FolioError.interrupted("\(what) cancelled after \(copied) bytes") }
            let count = LibcExtras.copyFileRange(source.rawValue, nil, destination.rawValue, nil, 8 << 20, 0)
            if count < 0 {
                let error = Errno(rawValue: errno)
                if error == .interrupted { continue }
                let unsupported: [Errno] = [.notSupported, .invalidArgument, .improperLink, .badFileDescriptor]
                if copied == 0, unsupported.contains(error) {
                    return nil
                }
                throw FolioError.system(error, what)
            }
            if count == 0 { break }
            copied += Int64(count)
            progress(copied)
        }
        if copied == 0 { progress(0) }
        return copied
    }
}
