import Foundation
import SystemPackage

extension ContentCache {
    /// A new version file of `size` bytes, all of them a hole (to be filled in place by ranges), closed.
    public func makeSizedFile(_ size: Int64) throws(FolioError) -> String {
        let (name, fd) = try makeFile()
        defer { close(fd) }
        guard ftruncate(fd, off_t(size)) == 0 else {
            let error = Errno(rawValue: errno)
            remove(name)
            throw .system(error, "size a version file to \(size) bytes")
        }
        return name
    }

    /// The sidecar `name` (``PartialContentRecord/name``), or `nil` if it is missing or unreadable (a download
    /// then starts over), or names a version file that is missing or not of the record's size.
    public func readPartialRecord(named name: String) -> PartialContentRecord? {
        guard let data = FileManager.default.contents(atPath: path(of: name).string),
              let record = try? JSONDecoder().decode(PartialContentRecord.self, from: data),
              record.name == name, record.file != Self.emptyVersion, !record.file.contains("/")
        else { return nil }
        var info = stat()
        guard stat(path(of: record.file).string, &info) == 0, Int64(info.st_size) == record.size else { return nil }
        return record
    }

    /// Replaces the sidecar of `record` atomically and durably (a temporary file synced, renamed into place).
    /// The caller made the bytes it names durable first.
    public func writePartialRecord(_ record: PartialContentRecord) throws(FolioError) {
        let data: Data
        do {
            data = try JSONEncoder().encode(record)
        } catch {
            throw .io("encode the ranges of \(record.file): \(error)")
        }
        let temporary = record.name + ".tmp"
        let fd = open(path(of: temporary).string, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(Errno(rawValue: errno), "create \(temporary)") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = written == data.count && fdatasync(fd) == 0
        let error = Errno(rawValue: errno)
        close(fd)
        guard synced, rename(path(of: temporary).string, path(of: record.name).string) == 0 else {
            unlink(path(of: temporary).string)
            throw .system(error, "write \(record.name)")
        }
    }

    /// Removes a sidecar (missing is fine).
    public func removePartialRecord(named name: String) {
        unlink(path(of: name).string)
    }
}
