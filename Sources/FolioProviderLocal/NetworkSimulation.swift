/// A simulated network between Folio and the local provider, for the demo and for tests: latency, bandwidth,
/// random failures and being offline.
///
/// Set it in ``LocalProvider/init(root:simulation:)``, or at run time by writing `DIR/.folio/simulate.json`
/// (see ``write(toRemoteAt:)``), which a running provider re-reads whenever the file changes; removing the file
/// returns to the simulation given at initialization. Missing keys in the file take their default values.
public struct NetworkSimulation: Codable, Sendable, Hashable {
    /// Delay added once to every call, in milliseconds (cancellable).
    public var latencyMilliseconds: Int
    /// Throughput of content transfers (fetches and uploads) in bytes per second; 0 is unlimited.
    public var bandwidthBytesPerSecond: Int64
    /// Probability (0...1) that a call fails with a retryable `.providerFailure` before doing anything.
    public var errorRate: Double
    /// Every call fails with `.offline`.
    public var offline: Bool
    /// Seed of the random draws behind ``errorRate``: the same seed fails the same calls.
    public var seed: UInt64
    /// Probability (0...1) that a call that changed the remote fails afterwards with a retryable
    /// `.providerFailure`, as when the reply is lost on the way back: the change is done, the caller does not
    /// know it and retries.
    public var lostReplyRate: Double
    /// Every create and modify fails with a final (not retryable) `.providerFailure`, as a provider that
    /// refuses a document (quota exceeded, say) does.
    public var rejectWrites: Bool

    /// A simulation; the defaults simulate a perfect network.
    public init(
        latencyMilliseconds: Int = 0, bandwidthBytesPerSecond: Int64 = 0, errorRate: Double = 0, offline: Bool = false,
        seed: UInt64 = 0, rejectWrites: Bool = false, lostReplyRate: Double = 0
    ) {
        self.lostReplyRate = min(max(lostReplyRate, 0), 1)
        self.rejectWrites = rejectWrites
        self.latencyMilliseconds = max(0, latencyMilliseconds)
        self.bandwidthBytesPerSecond = max(0, bandwidthBytesPerSecond)
        self.errorRate = min(max(errorRate, 0), 1)
        self.offline = offline
        self.seed = seed
    }

    /// A perfect network: no latency, unlimited bandwidth, no failures.
    public static let none = NetworkSimulation()

    private enum CodingKeys: String, CodingKey {
        case latencyMilliseconds, bandwidthBytesPerSecond, errorRate, offline, seed, rejectWrites, lostReplyRate
    }

    /// Decodes a simulation; absent keys take their default values and out-of-range values are clamped.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            latencyMilliseconds: try values.decodeIfPresent(Int.self, forKey: .latencyMilliseconds) ?? 0,
            bandwidthBytesPerSecond: try values.decodeIfPresent(Int64.self, forKey: .bandwidthBytesPerSecond) ?? 0,
            errorRate: try values.decodeIfPresent(Double.self, forKey: .errorRate) ?? 0,
            offline: try values.decodeIfPresent(Bool.self, forKey: .offline) ?? false,
            seed: try values.decodeIfPresent(UInt64.self, forKey: .seed) ?? 0,
            rejectWrites: try values.decodeIfPresent(Bool.self, forKey: .rejectWrites) ?? false,
            lostReplyRate: try values.decodeIfPresent(Double.self, forKey: .lostReplyRate) ?? 0
        )
    }
}
