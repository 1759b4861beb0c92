import FolioCore
import FolioProviderLocal
import FolioTesting

extension TemporaryRemote {
    /// The provider conformance suite over this remote: the Drive and the Notes container, the slow provider
    /// fetching at 1 MiB/s, the rival this test bundle run again as another process (none with `withRival`
    /// false: the race across processes is skipped).
    func conformanceSuite(withRival: Bool) -> ProviderConformance {
        let root = self.root
        let makeRival: ProviderConformance.RivalFactory = { try RivalProcessEntry.start(remote: root) }
        return ProviderConformance(
            options: ProviderConformance.Options(
                container: .drive, secondContainer: TemporaryRemote.notes.id,
                extraInvalidNames: [".folio-anything", ".folio-"], raceRounds: 100,
                expireAnchors: { container in try LocalProvider(root: root).expireAnchors(in: container) }
            ),
            makeProvider: { try LocalProvider(root: root) },
            makeSlowProvider: {
                try LocalProvider(root: root, simulation: NetworkSimulation(bandwidthBytesPerSecond: 1 << 20))
            },
            makeRival: withRival ? makeRival : nil
        )
    }
}
