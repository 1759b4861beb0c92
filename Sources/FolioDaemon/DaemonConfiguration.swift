import FolioCore
import FolioProviderLocal
import SystemPackage

/// Everything a daemon needs to know, from the command line or `mount -o`.
public struct DaemonConfiguration: Sendable {
    /// Where the documents are kept: a remote folder or a WebDAV server.
    public var remote: RemoteLocation
    /// Where the metadata store and content cache live.
    public var stateDirectory: FilePath
    /// Where to mount.
    public var mountpoint: FilePath
    /// Let other users in.
    public var allowOther: Bool
    /// How long a second writer waits.
    public var writeWaitTimeout: Duration
    /// How often the provider is polled for changes.
    public var pollInterval: Duration?
    /// Use the provider's change notifications where it has them.
    public var push: Bool
    /// How long local changes must pause before uploads start.
    public var uploadQuietPeriod: Duration
    /// How long namespace and attribute changes may wait to be written to the store together.
    public var groupWriteDelay: Duration
    /// How long a new file a process puts where its document was takes the document over (editors' saves).
    public var saveWindow: Duration
    /// Network simulation of the local provider.
    public var simulation: NetworkSimulation
    /// libfuse debug output.
    public var debug: Bool
    /// What the mount shows: the full view, or one app's view.
    public var view: NamespaceView
    /// How the app container of ``view`` is made when the remote has none yet (`folio mount --app ID --public
    /// --display-name NAME`): its display name (default: the id) and visibility (default: private).
    public var newContainerDisplayName: String?
    /// See ``newContainerDisplayName``.
    public var newContainerIsPublic = false
    /// How much content the cache may keep.
    public var cacheLimit: CacheLimit
    /// Processes that never download (desktop indexers): ``FileSystemConfiguration/indexers``.
    public var indexers: Set<String>
    /// Whether the tree below the view's root is listed in the background after the mount (``ListingPrefetcher``).
    public var prefetchListing = false

    /// Creates a configuration.
    public init(
        remote: RemoteLocation, stateDirectory: FilePath, mountpoint: FilePath, allowOther: Bool = false,
        writeWaitTimeout: Duration = .seconds(10), pollInterval: Duration? = nil, push: Bool = true,
        uploadQuietPeriod: Duration = .milliseconds(300), groupWriteDelay: Duration = .milliseconds(20),
        simulation: NetworkSimulation = .none, debug: Bool = false, view: NamespaceView = .full,
        cacheLimit: CacheLimit = .default, saveWindow: Duration = .seconds(3),
        indexers: Set<String> = FileSystemConfiguration.knownIndexers
    ) {
        self.indexers = indexers
        self.saveWindow = saveWindow
        self.cacheLimit = cacheLimit
        self.view = view
        self.remote = remote
        self.stateDirectory = stateDirectory
        self.mountpoint = mountpoint
        self.allowOther = allowOther
        self.writeWaitTimeout = writeWaitTimeout
        self.pollInterval = pollInterval
        self.push = push
        self.uploadQuietPeriod = uploadQuietPeriod
        self.groupWriteDelay = groupWriteDelay
        self.simulation = simulation
        self.debug = debug
    }

    /// Simulates a network between the mount and a remote folder: `latencyMilliseconds` added to every call,
    /// content at `bandwidthBytesPerSecond` (0: unlimited).
    public mutating func simulateNetwork(latencyMilliseconds: Int, bandwidthBytesPerSecond: Int64) {
        simulation = NetworkSimulation(
            latencyMilliseconds: latencyMilliseconds, bandwidthBytesPerSecond: bandwidthBytesPerSecond)
    }
}
