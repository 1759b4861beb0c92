import Glibc

extension FolioFileSystem {
    /// `fallocate` through `handle`, which must be open for writing: a write to its write session (the
    /// committed version is copied first, holes kept), committed at close or `fsync` like any write.
    public func changeSpace(
        _ handle: UInt64, _ change: SpaceChange, offset: Int64, length: Int64
    ) throws(FolioError) {
        guard offset >= 0, length > 0 else { throw .invalidArgument("fallocate of \(length) bytes at \(offset)") }
        let (end, overflow) = offset.addingReportingOverflow(length)
        guard !overflow else { throw .invalidArgument("fallocate range past the largest offset") }
        try state.withLock { state throws(FolioError) in
            guard let open = state.handles[handle] else { throw .badHandle("file handle \(handle)") }
            guard open.canWrite, var session = state.sessions[open.ino], session.id == open.sessionID else {
                throw .badHandle("file handle \(handle) is not open for writing")
            }
            try makeSessionWritable(&session)
            defer { state.sessions[open.ino] = session }
            try SparseFile.apply(change, to: session.fd, offset: offset, length: length)
            // Committed like a write even when no byte changes: the allocation is kept with the version.
            session.hasUncommittedChanges = true
            switch change {
            case .allocate(let keepSize), .zeroRange(let keepSize):
                if !keepSize { session.size = max(session.size, end) }
            case .punchHole:
                break
            }
        }
    }

    /// `lseek` with `SEEK_DATA`/`SEEK_HOLE` on `handle`: the offset of the next data or hole at or after
    /// `offset` in the content the handle sees; `nil` (`ENXIO`) at or past its end, or when no data follows.
    public func seek(_ handle: UInt64, to target: SeekTarget, from offset: Int64) throws(FolioError) -> Int64? {
        let source = try state.withLock { state throws(FolioError) -> ReadSource in
            guard let open = state.handles[handle] else { throw .badHandle("file handle \(handle)") }
            if let fd = open.readFD { return ReadSource(fd: fd, size: open.snapshotSize, pending: open.partial) }
            guard let session = state.sessions[open.ino] else { throw .badHandle("write session gone") }
            return ReadSource(fd: session.fd, size: session.size)
        }
        if let partial = source.pending, !partial.contains(0..<source.size) {
            // Bytes still on their way are holes in the file being filled: until it is complete, it is data
            // throughout (never a hole a reader would skip as zeros).
            guard offset >= 0, offset < source.size else { return nil }
            return target == .data ? offset : source.size
        }
        return SparseFile.seek(in: source.fd, to: target, from: offset, size: source.size)
    }
}
