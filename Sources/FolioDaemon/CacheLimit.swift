import Foundation

/// How much content the cache may keep: a size, or a share of the free space of the cache's disk when the
/// daemon starts.
public enum CacheLimit: Sendable, Equatable, CustomStringConvertible {
    /// At most this many bytes.
    case bytes(Int64)
    /// At most this percentage of the free space at start.
    case percentOfFreeSpace(Int)

    /// The default: half of the free space.
    public static let `default` = CacheLimit.percentOfFreeSpace(50)

    /// Reads `10G`, `500M`, `64K`, `1048576` or `25%`; `nil` for anything else.
    public init?(parsing text: String) {
        let text = text.trimmingCharacters(in: .whitespaces).uppercased()
        if text.hasSuffix("%") {
            guard let percent = Int(text.dropLast()), (1...100).contains(percent) else { return nil }
            self = .percentOfFreeSpace(percent)
            return
        }
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let multiplier = units[last] {
            digits = text.dropLast()
            unit = multiplier
        }
        guard let value = Int64(digits), value >= 0 else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: unit)
        guard !overflow else { return nil }
        self = .bytes(bytes)
    }

    /// The limit in bytes, given the free space of the cache's disk.
    public func bytes(freeSpace: Int64) -> Int64 {
        switch self {
        case .bytes(let bytes): return bytes
        case .percentOfFreeSpace(let percent): return freeSpace / 100 * Int64(percent)
        }
    }

    public var description: String {
        switch self {
        case .bytes(let bytes): return "\(bytes) bytes"
        case .percentOfFreeSpace(let percent): return "\(percent)% of the free space"
        }
    }
}
