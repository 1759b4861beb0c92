import FolioCore

/// A line type that writes its own JSON (the form `JSONEncoder` writes for it, keys in any order), read back with
/// `JSONDecoder` as any other: a first listing of 10,000 items appends 20,000 lines to the journal and the index,
/// and `JSONEncoder` spent a third of that listing's time on them.
protocol JSONLineWritable: Codable {
    /// Writes the value as one JSON object.
    func write(to writer: inout JSONLineWriter)
}

/// Writes JSON objects into bytes: strings escaped as RFC 8259 requires (`"`, `\` and control characters; the rest
/// is UTF-8 as it is), integers in decimal; an optional that is `nil` is left out, as `JSONEncoder` leaves it.
struct JSONLineWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the object being written has no member yet.
    private var first = true

    /// Writes an object whose members `body` writes.
    mutating func object(_ body: (inout JSONLineWriter) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        first = true
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    mutating func member(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        writeKey(key)
        string(value)
    }

    mutating func member<Raw: RawRepresentable>(_ key: StaticString, _ value: Raw?) where Raw.RawValue == String {
        member(key, value?.rawValue)
    }

    mutating func member(_ key: StaticString, _ value: Int64?) {
        guard let value else { return }
        writeKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func member(_ key: StaticString, _ value: Int?) {
        member(key, value.map(Int64.init))
    }

    mutating func member(_ key: StaticString, _ value: UInt32?) {
        member(key, value.map(Int64.init))
    }

    mutating func member(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        writeKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A member whose value is an object `value` writes.
    mutating func member<Value: JSONLineWritable>(_ key: StaticString, _ value: Value?) {
        guard let value else { return }
        writeKey(key)
        value.write(to: &self)
        first = false
    }

    /// A timestamp, as its synthesized `Codable` writes it.
    mutating func member(_ key: StaticString, _ value: Timestamp) {
        writeKey(key)
        object { writer in
            writer.member("seconds", value.seconds)
            writer.member("nanoseconds", value.nanoseconds)
        }
    }

    /// Ends a line.
    mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        first = true
    }

    private mutating func writeKey(_ key: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: "\":".utf8)
    }

    private mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: "\\\\".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xf)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension RemoteItem: JSONLineWritable {
    func write(to writer: inout JSONLineWriter) {
        writer.object { writer in
            writer.member("id", id)
            writer.member("container", container)
            writer.member("parentID", parentID)
            writer.member("name", name)
            writer.member("kind", kind)
            writer.member("size", size)
            writer.member("modificationTime", modificationTime)
            writer.member("mode", mode)
            writer.member("symlinkTarget", symlinkTarget)
            writer.member("version", version)
        }
    }
}
