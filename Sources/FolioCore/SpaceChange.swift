/// A change of a file's space (`fallocate(2)`'s modes that Folio supports).
public enum SpaceChange: Sendable, Equatable {
    /// Allocates the range; the file grows to cover it unless `keepSize` (mode 0, `FALLOC_FL_KEEP_SIZE`).
    case allocate(keepSize: Bool)
    /// Frees the range, which reads as zeros; the size stays (`FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`).
    case punchHole
    /// Zeroes the range; the file grows to cover it unless `keepSize` (`FALLOC_FL_ZERO_RANGE`).
    case zeroRange(keepSize: Bool)
}
