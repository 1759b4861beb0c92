/// A set of byte ranges of a file (which bytes of a version are here, or being fetched): sorted, disjoint and
/// never touching (adjacent ranges are merged). A value type with no I/O; stored in the sidecar of a download.
public struct ByteRanges: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The ranges, ascending, disjoint, not adjacent, none empty.
    public private(set) var ranges: [Range<Int64>] = []

    /// No bytes.
    public init() {}

    /// The bytes of `ranges` (any order, overlapping or not).
    public init(_ ranges: [Range<Int64>]) {
        for range in ranges { insert(range) }
    }

    /// The number of bytes in the set.
    public var count: Int64 { ranges.reduce(0) { $0 + Int64($1.count) } }

    /// Whether the set holds no byte.
    public var isEmpty: Bool { ranges.isEmpty }

    /// Adds `range`.
    public mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        var lower = range.lowerBound
        var upper = range.upperBound
        // The ranges that overlap or touch `range` are merged into it.
        let first = ranges.firstIndex { $0.upperBound >= lower } ?? ranges.endIndex
        var last = first
        while last < ranges.endIndex, ranges[last].lowerBound <= upper {
            lower = min(lower, ranges[last].lowerBound)
            upper = max(upper, ranges[last].upperBound)
            last += 1
        }
        ranges.replaceSubrange(first..<last, with: [lower..<upper])
    }

    /// Removes `range`.
    public mutating func remove(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        var result: [Range<Int64>] = []
        result.reserveCapacity(ranges.count + 1)
        for existing in ranges {
            if existing.upperBound <= range.lowerBound || existing.lowerBound >= range.upperBound {
                result.append(existing)
                continue
            }
            if existing.lowerBound < range.lowerBound { result.append(existing.lowerBound..<range.lowerBound) }
            if existing.upperBound > range.upperBound { result.append(range.upperBound..<existing.upperBound) }
        }
        ranges = result
    }

    /// Whether every byte of `range` is in the set (an empty range is).
    public func contains(_ range: Range<Int64>) -> Bool {
        guard !range.isEmpty else { return true }
        return ranges.contains { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }
    }

    /// Whether any byte of `range` is in the set.
    public func overlaps(_ range: Range<Int64>) -> Bool {
        ranges.contains { $0.overlaps(range) }
    }

    /// The parts of `range` not in the set, ascending.
    public func missing(in range: Range<Int64>) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        var position = range.lowerBound
        for existing in ranges where existing.upperBound > position {
            if existing.lowerBound >= range.upperBound { break }
            if existing.lowerBound > position { result.append(position..<existing.lowerBound) }
            position = max(position, existing.upperBound)
            if position >= range.upperBound { break }
        }
        if position < range.upperBound { result.append(position..<range.upperBound) }
        return result
    }

    /// `[0..<10, 20..<30]`.
    public var description: String {
        "[" + ranges.map { "\($0.lowerBound)..<\($0.upperBound)" }.joined(separator: ", ") + "]"
    }
}
