import FolioCore
import Foundation
import Glibc
import SystemPackage

/// The change journal of one container: `DIR/.folio/journal/<container id>`, a header line then one
/// ``JournalRecord`` per line (JSON), appended by every Folio process on the remote under the remote's lock
/// (``RemoteLock``), so records of two processes interleave in the order their changes were made.
///
/// The header names the journal's *generation* (a random id, new whenever the file is made anew) and its
/// *base*, the sequence of the first record it still holds. A position (``JournalAnchor``) is a generation,
/// the sequence of the last record seen and the byte offset after it (a hint: checked, and found by a scan of
/// the file when stale). A position stays answerable while every record after it is in the file: past the size
/// limit the oldest half of the records is dropped (the base goes up) and positions before the new base are
/// expired; a journal deleted (by hand, or by ``LocalProvider/expireAnchors()``) expires every position.
///
/// Records are appended with `O_APPEND` after the change they describe and are not flushed to disk: a crash
/// can lose the last ones (the changes themselves are found again by a re-listing: see
/// ``RemoteTree/sweep(_:folders:)``). A line cut short by a crash is dropped by the next writer. A remote this
/// process cannot write (a read-only share) has no journal: its anchors name the generation `read-only`, no
/// record is kept (nothing changes through Folio there), and changes made there by others are not reported.
struct ChangeJournal: Sendable {
    /// The header line.
    private struct Header: Codable {
        /// The format.
        var journal = 1
        /// The generation.
        var generation: String
        /// The first sequence the file may hold.
        var base: UInt64
    }

    /// The journal file.
    let path: FilePath
    /// The size past which the oldest records are dropped.
    var limit: Int64
    /// The generation of the file.
    private(set) var generation = ""
    /// The sequence of the first record the file may hold.
    private(set) var base: UInt64 = 1
    /// The sequence of the last record (`base - 1` when there is none).
    private(set) var lastSequence: UInt64 = 0
    /// Where the records start.
    private var headerEnd: Int64 = 0
    /// The end of the last complete record.
    private(set) var end: Int64 = 0
    /// The file's device and inode when it was read (another one: it was made anew or compacted).
    private var fileID: [UInt64] = []
    /// Whether the journal could not be made because the remote cannot be written here.
    private(set) var isReadOnly = false

    /// The default size limit (about 100,000 records).
    static let defaultLimit: Int64 = 8 << 20

    /// The journal at `path`, read (or made, if missing) by ``refresh()``.
    init(path: FilePath, limit: Int64 = Self.defaultLimit) {
        self.path = path
        self.limit = limit
    }

    /// The position after the last record.
    var position: JournalAnchor.Position {
        JournalAnchor.Position(generation: generation, sequence: lastSequence, offset: end)
    }

    // MARK: Keeping up

    /// Catches up with the file: makes it if missing, reads it again if it was made anew or compacted, and reads
    /// the records other processes appended since (in proportion to them). Call under the remote's lock.
    mutating func refresh() throws {
        guard let status = try SystemCalls.statusIfPresent(path) else {
            do {
                try create(base: 1)
            } catch FolioError.readOnly, FolioError.accessDenied {
                isReadOnly = true
                (generation, base, lastSequence, headerEnd, end, fileID) = ("read-only", 1, 0, 0, 0, [])
                return
            }
            isReadOnly = false
            return try load()
        }
        isReadOnly = false
        if [status.device, status.inode] != fileID || status.size < end { return try load() }
        guard status.size != end else { return }
        try readRecords(from: end, until: nil) { record, after in
            lastSequence = record.sequence
            end = after
            return true
        }
        if status.size > end { try truncateTornLine() }
    }

    /// Reads the header and every record (a new or compacted file: bounded by ``limit``).
    /// A sequence past which a journal is taken for damaged (sequences count changes: never that many).
    static let largestSequence: UInt64 = 1 << 62

    private mutating func load() throws {
        let status = try SystemCalls.status(path)
        let (line, after) = try firstLine(at: 0)
        guard let line, let header = try? JSONDecoder().decode(Header.self, from: Data(line)),
            header.journal == 1, header.base >= 1, header.base < Self.largestSequence
        else {
            // Unreadable (not ours, or cut short while it was made): started anew, which expires every position.
            try create(base: 1)
            return try load()
        }
        fileID = [status.device, status.inode]
        generation = header.generation
        base = header.base
        lastSequence = header.base - 1
        headerEnd = after
        end = after
        var outOfOrder = false
        try readRecords(from: after, until: nil) { record, recordEnd in
            // The journal is the remote's, not trusted: sequences only grow, and stay far from overflowing.
            guard record.sequence > lastSequence, record.sequence < Self.largestSequence else {
                outOfOrder = true
                return false
            }
            lastSequence = record.sequence
            end = recordEnd
            return true
        }
        if outOfOrder {
            try create(base: 1)
            return try load()
        }
        if status.size > end { try truncateTornLine() }
    }

    /// Makes the file anew (a new generation) with records from `base` on to follow: `tail` (complete lines).
    private func create(base: UInt64, generation: String = UUID().uuidString, tail: Data = Data()) throws {
        // Only the journals' own folder is made: the remote's state folder must be there already, so an empty
        // folder left where the remote was (an unmounted share) is never written into (it fails: not found).
        let folder = path.removingLastComponent()
        if try SystemCalls.statusIfPresent(folder) == nil {
            do {
                try SystemCalls.makeDirectory(folder, permissions: 0o755)
            } catch FolioError.exists {
                // Made by another process meanwhile.
            }
        }
        var data = try JSONEncoder().encode(Header(generation: generation, base: base))
        data.append(UInt8(ascii: "\n"))
        data.append(tail)
        try AtomicFile.write(data, to: path)
    }

    /// Drops bytes after the last complete record (a writer that died mid-line); the lock is held, so nobody
    /// is writing.
    private func truncateTornLine() throws {
        guard Glibc.truncate(path.string, off_t(end)) == 0 else { throw SystemCalls.lastError("truncate", path) }
    }

    // MARK: Writing

    /// Appends records (their sequences are given here) after ``refresh()``; compacts past the limit.
    mutating func append(_ records: [JournalRecord]) throws {
        guard !records.isEmpty else { return }
        try refresh()
        guard !isReadOnly else { return }
        var data = Data()
        let encoder = JSONEncoder()
        var sequence = lastSequence
        for var record in records {
            sequence += 1
            record.sequence = sequence
            data.append(try encoder.encode(record))
            data.append(UInt8(ascii: "\n"))
        }
        let descriptor = try FileDescriptor.open(path, .writeOnly, options: [.append, .closeOnExec])
        do {
            try descriptor.closeAfter { _ = try data.withUnsafeBytes { try descriptor.writeAll($0) } }
        } catch let error as Errno {
            throw FolioError.system(error, "append to the change journal \(path)")
        }
        lastSequence = sequence
        end += Int64(data.count)
        if end > limit { try compact() }
    }

    /// Drops the oldest half of the records: positions before the new base are expired.
    mutating func compact() throws {
        let middle = headerEnd + (end - headerEnd) / 2
        var cut: Int64?
        var newBase = lastSequence + 1
        try readRecords(from: headerEnd, until: nil) { record, after in
            if after > middle {
                newBase = record.sequence + 1
                cut = after
                return false
            }
            return true
        }
        let tail = try cut.map { try bytes(from: $0, to: end) } ?? Data()
        try create(base: newBase, generation: generation, tail: tail)
        try load()
    }

    /// Deletes the journal: every position is expired (the next use makes a new generation).
    mutating func expire() throws {
        SystemCalls.removeFileQuietly(path)
        try refresh()
    }

    // MARK: Reading

    /// The records after `anchor`'s position, at most `limit` of them, and the position after the last one
    /// returned; `.anchorExpired` if the journal no longer holds every record after it. Reads in proportion to
    /// the records returned (plus, when the offset in the anchor is stale after a compaction, one scan of the
    /// file).
    func records(
        after anchor: JournalAnchor.Position, limit: Int
    ) throws -> (records: [JournalRecord], position: JournalAnchor.Position, moreComing: Bool) {
        guard anchor.generation == generation else {
            throw FolioError.anchorExpired("the change journal \(path) was started anew since this anchor")
        }
        guard anchor.sequence >= base - 1, anchor.sequence <= lastSequence else {
            throw FolioError.anchorExpired(
                "the change journal \(path) holds records \(base)…\(lastSequence), "
                    + "not those after \(anchor.sequence)")
        }
        guard anchor.sequence < lastSequence else { return ([], position, false) }
        var start = anchor.offset
        if !(start >= headerEnd && start < end && (try? firstRecord(at: start))?.sequence == anchor.sequence + 1) {
            start = headerEnd
            try readRecords(from: headerEnd, until: end) { record, after in
                if record.sequence <= anchor.sequence {
                    start = after
                    return true
                }
                return false
            }
        }
        var records: [JournalRecord] = []
        var offset = start
        try readRecords(from: start, until: end) { record, after in
            guard records.count < limit else { return false }
            records.append(record)
            offset = after
            return true
        }
        let sequence = records.last?.sequence ?? anchor.sequence
        return (records, JournalAnchor.Position(generation: generation, sequence: sequence, offset: offset),
                sequence < lastSequence)
    }

    /// The record starting at `offset`.
    private func firstRecord(at offset: Int64) throws -> JournalRecord? {
        let (line, _) = try firstLine(at: offset)
        return line.flatMap { try? JSONDecoder().decode(JournalRecord.self, from: Data($0)) }
    }

    /// The complete line starting at `offset` (without its newline) and the offset after it.
    private func firstLine(at offset: Int64) throws -> (line: [UInt8]?, after: Int64) {
        var found: [UInt8]?
        var after = offset
        try readLines(from: offset, until: nil) { line, lineEnd in
            found = Array(line)
            after = lineEnd
            return false
        }
        return (found, after)
    }

    /// Calls `body` with each complete record from `offset` (up to `until`) and the offset after it, until it
    /// returns false. A line that is not a record ends the reading.
    private func readRecords(
        from offset: Int64, until: Int64?, _ body: (JournalRecord, Int64) throws -> Bool
    ) throws {
        let decoder = JSONDecoder()
        try readLines(from: offset, until: until) { line, after in
            guard let record = try? decoder.decode(JournalRecord.self, from: Data(line)) else { return false }
            return try body(record, after)
        }
    }

    /// Calls `body` with each complete line from `offset` (up to `until`) and the offset after it, until it
    /// returns false; reads in chunks.
    private func readLines(
        from offset: Int64, until: Int64?, _ body: (ArraySlice<UInt8>, Int64) throws -> Bool
    ) throws {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec])
        } catch let error as Errno {
            throw FolioError.system(error, "open the change journal \(path)")
        }
        defer { try? descriptor.close() }
        var pending: [UInt8] = []
        var pendingStart = offset
        var readAt = offset
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while until.map({ readAt < $0 }) ?? true {
            let count = try chunk.withUnsafeMutableBytes { buffer in
                try descriptor.read(fromAbsoluteOffset: readAt, into: buffer)
            }
            guard count > 0 else { return }
            readAt += Int64(count)
            pending.append(contentsOf: chunk[..<count])
            var lineStart = 0
            while let newline = pending[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
                let after = pendingStart + Int64(newline + 1)
                if let until, after > until { return }
                guard try body(pending[lineStart..<newline], after) else { return }
                lineStart = newline + 1
            }
            pending.removeFirst(lineStart)
            pendingStart += Int64(lineStart)
        }
    }

    /// The bytes from `start` to `end`.
    private func bytes(from start: Int64, to end: Int64) throws -> Data {
        let descriptor = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec])
        defer { try? descriptor.close() }
        var data = [UInt8](repeating: 0, count: Int(end - start))
        var done = 0
        while done < data.count {
            let count = try data[done...].withUnsafeMutableBytes { buffer in
                try descriptor.read(fromAbsoluteOffset: start + Int64(done), into: buffer)
            }
            guard count > 0 else { break }
            done += count
        }
        return Data(data[..<done])
    }
}
