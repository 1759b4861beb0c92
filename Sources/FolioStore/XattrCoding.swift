import FolioCore

/// The compact binary form of a node's extended attributes, stored in the `node.xattrs` column.
///
/// Layout: a format byte (`1`), then for each attribute in name order: the name's UTF-8 length as a little-endian
/// `UInt32`, the name's bytes, the value's length as a little-endian `UInt32`, the value's bytes. An empty set of
/// attributes is stored as SQL `NULL`, so most rows carry no blob at all.
enum XattrCoding {
    /// The format byte written first.
    static let format: UInt8 = 1

    /// Encodes attributes; `nil` when there are none.
    static func encode(_ xattrs: [String: [UInt8]]) -> [UInt8]? {
        guard !xattrs.isEmpty else { return nil }
        var bytes: [UInt8] = [format]
        bytes.reserveCapacity(1 + xattrs.reduce(0) { $0 + 8 + $1.key.utf8.count + $1.value.count })
        for (name, value) in xattrs.sorted(by: { $0.key < $1.key }) {
            append(UInt32(truncatingIfNeeded: name.utf8.count), to: &bytes)
            bytes.append(contentsOf: name.utf8)
            append(UInt32(truncatingIfNeeded: value.count), to: &bytes)
            bytes.append(contentsOf: value)
        }
        return bytes
    }

    /// Decodes attributes written by ``encode(_:)``; `nil` data means none. Throws if the blob is malformed.
    static func decode(_ bytes: [UInt8]?) throws(FolioError) -> [String: [UInt8]] {
        guard let bytes, !bytes.isEmpty else { return [:] }
        guard bytes[0] == format else {
            throw .io("extended attributes blob has unknown format \(bytes[0])")
        }
        var result: [String: [UInt8]] = [:]
        var offset = 1
        while offset < bytes.count {
            let nameBytes = try field(bytes, &offset)
            let value = try field(bytes, &offset)
            result[String(decoding: nameBytes, as: UTF8.self)] = Array(value)
        }
        return result
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
    }

    /// Reads one length-prefixed field at `offset` and advances past it.
    private static func field(_ bytes: [UInt8], _ offset: inout Int) throws(FolioError) -> ArraySlice<UInt8> {
        guard bytes.count - offset >= 4 else {
            throw .io("extended attributes blob is truncated at byte \(offset)")
        }
        let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16
            | Int(bytes[offset + 3]) << 24
        offset += 4
        guard bytes.count - offset >= length else {
            throw .io("extended attributes blob is truncated at byte \(offset)")
        }
        defer { offset += length }
        return bytes[offset..<offset + length]
    }
}
