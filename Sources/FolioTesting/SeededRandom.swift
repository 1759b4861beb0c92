/// A seeded random number generator (splitmix64) for reproducible tests: the same seed gives the same
/// sequence on every machine and every run. Print the seed of a failing randomized test to replay it.
public struct SeededRandom: RandomNumberGenerator, Sendable, Hashable {
    /// The generator's state; starts at the seed.
    public private(set) var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            var word = next()
            for _ in 0..<min(8, count - offset) {
                result[offset] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                offset += 1
            }
        }
        return result
    }
}
