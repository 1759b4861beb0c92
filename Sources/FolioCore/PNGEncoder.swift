/// Writes small truecolor PNG images without a compression library: the image data goes into zlib "stored"
/// (uncompressed) deflate blocks, which every PNG reader accepts. Meant for sample and test images, and for the
/// chunks Folio adds to thumbnails (``PNGText``).
public enum PNGEncoder {
    /// The PNG file for a `width` × `height` RGB image whose pixel at (x, y) is `pixel(x, y)`.
    public static func encode(width: Int, height: Int, pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        precondition(width > 0 && height > 0, "an image needs at least one pixel")
        var scanlines: [UInt8] = []
        scanlines.reserveCapacity(height * (1 + width * 3))
        for y in 0..<height {
            scanlines.append(0)  // filter type None
            for x in 0..<width {
                let (red, green, blue) = pixel(x, y)
                scanlines.append(contentsOf: [red, green, blue])
            }
        }
        var header: [UInt8] = []
        header.appendBigEndian(UInt32(width))
        header.appendBigEndian(UInt32(height))
        header.append(contentsOf: [8, 2, 0, 0, 0])  // 8 bits per channel, RGB, deflate, no filter, no interlace

        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        appendChunk("IHDR", header, to: &file)
        appendChunk("IDAT", zlibStored(scanlines), to: &file)
        appendChunk("IEND", [], to: &file)
        return file
    }

    /// A zlib stream holding `data` in stored deflate blocks of at most 65,535 bytes.
    public static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var stream: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let isLast = offset + length == data.count
            stream.append(isLast ? 1 : 0)
            stream.append(contentsOf: [UInt8(length & 0xFF), UInt8(length >> 8)])
            stream.append(contentsOf: [UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)])
            stream.append(contentsOf: data[offset..<offset + length])
            offset += length
        } while offset < data.count
        stream.appendBigEndian(adler32(data))
        return stream
    }

    /// Appends a chunk: length, type, data, CRC-32 of type and data.
    public static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        let typed = Array(type.utf8) + data
        file.appendBigEndian(UInt32(data.count))
        file.append(contentsOf: typed)
        file.appendBigEndian(crc32(typed))
    }

    /// The CRC-32 (ISO 3309, as PNG uses it) of `bytes`.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// The Adler-32 checksum (as zlib uses it) of `bytes`.
    public static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var low: UInt32 = 1
        var high: UInt32 = 0
        for byte in bytes {
            low = (low + UInt32(byte)) % 65_521
            high = (high + low) % 65_521
        }
        return high << 16 | low
    }

    /// CRC-32 of every byte value.
    private static let crcTable: [UInt32] = (0..<256).map { value in
        var crc = UInt32(value)
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1
        }
        return crc
    }
}

extension [UInt8] {
    /// Appends a 32-bit integer, most significant byte first.
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) })
    }
}
