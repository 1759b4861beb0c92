import FolioCore

/// The `tEXt` chunks of a PNG file: the Thumbnail Managing Standard keeps a thumbnail's source (`Thumb::URI`) and
/// its modification time (`Thumb::MTime`) in them.
public enum PNGText {
    /// The PNG signature.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// `png` with its `tEXt` chunks of the keys in `texts` replaced by those values (placed after `IHDR`, as
    /// readers expect them before the image data); `nil` if `png` is not a well-formed PNG file.
    public static func setting(_ texts: [(key: String, value: String)], in png: [UInt8]) -> [UInt8]? {
        guard let chunks = chunks(of: png), chunks.first?.type == "IHDR", chunks.last?.type == "IEND" else {
            return nil
        }
        let keys = Set(texts.map(\.key))
        var file = signature
        for chunk in chunks {
            if chunk.type == "tEXt", let key = text(chunk.data)?.key, keys.contains(key) { continue }
            PNGEncoder.appendChunk(chunk.type, chunk.data, to: &file)
            if chunk.type == "IHDR" {
                for (key, value) in texts {
                    PNGEncoder.appendChunk("tEXt", Array(key.utf8) + [0] + Array(value.utf8), to: &file)
                }
            }
        }
        return file
    }

    /// The `tEXt` values of `png` by key; `nil` if it is not a well-formed PNG file.
    public static func texts(of png: [UInt8]) -> [String: String]? {
        guard let chunks = chunks(of: png) else { return nil }
        var texts: [String: String] = [:]
        for chunk in chunks where chunk.type == "tEXt" {
            if let (key, value) = text(chunk.data) { texts[key] = value }
        }
        return texts
    }

    private static func text(_ data: [UInt8]) -> (key: String, value: String)? {
        guard let zero = data.firstIndex(of: 0) else { return nil }
        // tEXt is Latin-1; the keys and values written here are ASCII (URIs are percent-encoded).
        let key = String(decoding: data[..<zero], as: UTF8.self)
        let value = String(decoding: data[(zero + 1)...], as: UTF8.self)
        return (key, value)
    }

    /// The chunks of `png`, each checked against its CRC; `nil` if the file is cut short or a CRC is wrong.
    static func chunks(of png: [UInt8]) -> [(type: String, data: [UInt8])]? {
        guard png.count >= 8, Array(png[0..<8]) == signature else { return nil }
        var chunks: [(type: String, data: [UInt8])] = []
        var offset = 8
        while offset < png.count {
            guard offset + 12 <= png.count else { return nil }
            let length = Int(bigEndian(png, offset))
            guard length <= png.count - offset - 12 else { return nil }
            let typed = Array(png[(offset + 4)..<(offset + 8 + length)])
            guard PNGEncoder.crc32(typed) == bigEndian(png, offset + 8 + length) else { return nil }
            chunks.append((String(decoding: typed[0..<4], as: UTF8.self), Array(typed[4...])))
            offset += 12 + length
            if chunks.last?.type == "IEND" { break }
        }
        return chunks
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
