import FolioCore

/// A request on the control socket (one JSON line).
public struct ControlRequest: Codable, Sendable {
    /// `status`, `retry` (failed uploads, all or under `path`), `attach` (mount one more view of this daemon's
    /// state), `grant`, or a content command (`pin`, `evict`, …).
    public var command: String
    /// Path relative to the mount root, for commands about one item.
    public var path: String?
    /// The app container a command is about (`attach`, `grant`).
    public var app: String?
    /// Where to mount (`attach`), the name to give (`grant`), what to keep (`resolve`), the size
    /// (`thumbnail`: `normal` or `large`), or the token (`resolve-bookmark`).
    public var target: String?

    /// For `attach` of an app with no container yet: the container's display name, and whether it is public.
    public var displayName: String?
    /// See ``displayName``.
    public var isPublic: Bool?

    /// Creates a request.
    public init(
        command: String, path: String? = nil, app: String? = nil, target: String? = nil, displayName: String? = nil,
        isPublic: Bool? = nil
    ) {
        self.command = command
        self.path = path
        self.app = app
        self.target = target
        self.displayName = displayName
        self.isPublic = isPublic
    }
}

/// The state of one item as `folio status PATH` shows it.
public struct ItemStatus: Codable, Sendable {
    /// Path relative to the mount root.
    public var path: String
    /// Item id.
    public var id: String
    /// Container id.
    public var container: String
    /// Kind.
    public var kind: String
    /// State name.
    public var state: String
    /// Size in bytes.
    public var size: Int64
    /// Download progress `done/total`.
    public var progress: String
    /// Provider version.
    public var version: String?
    /// Pinned.
    public var pinned: Bool
    /// Changes waiting for upload.
    public var pendingUpload: Bool
    /// Why the item's upload failed, while it is `failed` (a failure that needs the user, and what to do).
    public var error: String?
    /// Why the item's last upload failed and what it waits for, while it waits to be retried by itself.
    public var waiting: String?
}

/// The answer to a control request (one JSON line).
public struct ControlResponse: Codable, Sendable {
    /// Whether the request succeeded.
    public var ok: Bool
    /// What went wrong.
    public var error: String?
    /// The daemon's process id.
    public var pid: Int32?
    /// Mountpoint.
    public var mountpoint: String?
    /// Remote.
    public var remote: String?
    /// State folder.
    public var stateDirectory: String?
    /// Filesystem counters.
    public var summary: FileSystemStatus?
    /// One item's status.
    public var item: ItemStatus?
    /// The control socket that answered (for programs that talk to it directly: one JSON request per line).
    public var controlSocket: String?
    /// The view the answering mount shows (`full view`, `app view of ID`).
    public var view: String?
    /// What a command did, for the user.
    public var message: String?
    /// An item's versions (`versions`).
    public var versions: [VersionInfo]?
    /// A resolved bookmark (`resolve-bookmark`).
    public var bookmark: BookmarkResolution?
    /// The remote's containers (`containers`).
    public var containers: [ContainerSummary]?
    /// The documents used last (`recents`).
    public var recents: [RecentDocument]?
    /// External references (`grants`).
    public var grants: [Grant]?
    /// Bytes a command returns (`thumbnail`: a PNG file), in base64.
    public var data: String?
    /// The answering mount is a view attached to another mount's daemon: unmounting it leaves the daemon
    /// running.
    public var isAttachedView: Bool?

    /// Creates a response.
    public init(ok: Bool, error: String? = nil) {
        self.ok = ok
        self.error = error
    }

    /// Whether the answer has the shape a daemon gives: a refusal says why, a success names the daemon and
    /// its mount.
    public var isWellFormed: Bool {
        ok ? pid.map { $0 > 0 } == true && mountpoint?.isEmpty == false : error?.isEmpty == false
    }
}

/// One container as `folio containers` lists it.
public struct ContainerSummary: Codable, Sendable {
    /// The container's id.
    public var id: String
    /// Its display name (its folder's name in the full view, when public).
    public var displayName: String
    /// Whether the full view shows it.
    public var isPublic: Bool
    /// Items known on this machine (see ``foldersNotListed``).
    public var items: Int
    /// Bytes of the files known on this machine.
    public var size: Int64
    /// Bytes of those files that are on this machine.
    public var localSize: Int64
    /// Folders never listed here, whose contents the counts leave out.
    public var foldersNotListed: Int
}
