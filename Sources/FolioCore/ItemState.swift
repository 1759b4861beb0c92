/// The lifecycle of an item's content, one state machine for every item (DESIGN.md §2 "Item states").
///
/// `placeholder` → `materializing` → `materialized` → `dirty(g)` → `uploading(g)` → `materialized`, plus
/// `conflicted` and `failed`. Transitions are pure: ``applying(_:)`` returns the next state or an error and
/// does no I/O. It is the only way an item's state changes once the item exists (``Node/apply(_:)``): an event
/// the state does not allow is a ``FolioError`` the caller handles deliberately.
public enum ItemState: Hashable, Sendable, Codable {
    /// Metadata only; the content is on the provider.
    case placeholder
    /// The content is downloading.
    case materializing
    /// The content is here and equals the provider's.
    case materialized
    /// Committed generation `generation` is not uploaded yet.
    case dirty(generation: UInt64)
    /// Generation `generation` is being uploaded.
    case uploading(generation: UInt64)
    /// The provider changed the item while a local version was pending; the local version is kept.
    case conflicted
    /// Uploading failed for a reason that needs the user (``UploadFailure``); the local version is kept, and
    /// the upload is retried at mount, by `folio retry` and by the next commit.
    case failed(reason: String)

    /// The name `user.folio.state` shows.
    public var name: String {
        switch self {
        case .placeholder: return "placeholder"
        case .materializing: return "materializing"
        case .materialized: return "materialized"
        case .dirty: return "dirty"
        case .uploading: return "uploading"
        case .conflicted: return "conflicted"
        case .failed: return "failed"
        }
    }

    /// Whether the content is on this machine.
    public var hasLocalContent: Bool {
        switch self {
        case .placeholder, .materializing: return false
        default: return true
        }
    }

    /// Whether a local version waits for upload (or was refused), so it must never be replaced or evicted.
    public var hasPendingLocalVersion: Bool {
        switch self {
        case .dirty, .uploading, .conflicted, .failed: return true
        default: return false
        }
    }

    /// Something that happens to an item.
    public enum Event: Hashable, Sendable {
        /// A download of the content started.
        case materializeStarted
        /// The download finished and the content is in the cache.
        case materializeFinished
        /// The download failed or was cancelled; the item stays a placeholder.
        case materializeFailed
        /// A write session committed local generation `generation`.
        case committed(generation: UInt64)
        /// The uploader picked up generation `generation`.
        case uploadStarted(generation: UInt64)
        /// The provider stored generation `generation`.
        case uploadFinished(generation: UInt64)
        /// The upload failed; a failure that can clear (`retryable`) goes back to `dirty`.
        case uploadFailed(generation: UInt64, reason: String, retryable: Bool)
        /// The provider refused the upload because the remote version changed.
        case conflictDetected
        /// The content was dropped from the cache.
        case evicted
        /// `folio retry` or a mount makes a `failed` item's generation `generation` wait for upload again.
        case retryRequested(generation: UInt64)
        /// The committed content to upload cannot be read any more (`reason`, which needs the user).
        case contentUnreadable(reason: String)
        /// A remote change replaced the content of an item with no local version pending: a placeholder of the
        /// new version.
        case remoteContentChanged
        /// The user resolved a conflict by keeping a remote version: it is the item's content now.
        case remoteVersionKept
    }

    /// The state after `event`, or an error if the event is not allowed in this state.
    public func applying(_ event: Event) throws(FolioError) -> ItemState {
        switch (self, event) {
        case (.placeholder, .materializeStarted), (.materializing, .materializeStarted):
            return .materializing
        case (.materializing, .materializeFinished), (.placeholder, .materializeFinished):
            return .materialized
        case (.materializing, .materializeFailed), (.placeholder, .materializeFailed):
            return .placeholder
        case (_, .committed(let generation)):
            return .dirty(generation: generation)
        case (.dirty(let current), .uploadStarted(let generation)) where current == generation:
            return .uploading(generation: generation)
        case (.failed, .uploadStarted(let generation)):
            return .uploading(generation: generation)
        case (.uploading(let current), .uploadFinished(let generation)) where current == generation:
            return .materialized
        case (.dirty, .uploadFinished):
            // A newer generation was committed while the older one uploaded: it stays dirty.
            return self
        case (.uploading(let current), .uploadFailed(let generation, let reason, let retryable))
            where current == generation:
            return retryable ? .dirty(generation: generation) : .failed(reason: reason)
        case (.dirty, .uploadFailed):
            return self
        case (.dirty, .conflictDetected), (.uploading, .conflictDetected), (.conflicted, .conflictDetected),
            (.failed, .conflictDetected):
            return .conflicted
        case (.materialized, .evicted), (.placeholder, .evicted):
            return .placeholder
        case (.failed, .retryRequested(let generation)):
            return .dirty(generation: generation)
        case (.materialized, .contentUnreadable(let reason)), (.dirty, .contentUnreadable(let reason)),
            (.uploading, .contentUnreadable(let reason)), (.failed, .contentUnreadable(let reason)):
            return .failed(reason: reason)
        case (.placeholder, .remoteContentChanged), (.materializing, .remoteContentChanged),
            (.materialized, .remoteContentChanged):
            return .placeholder
        case (.conflicted, .remoteVersionKept), (.dirty, .remoteVersionKept), (.uploading, .remoteVersionKept),
            (.failed, .remoteVersionKept), (.materialized, .remoteVersionKept), (.placeholder, .remoteVersionKept),
            (.materializing, .remoteVersionKept):
            return .materialized
        default:
            throw .invalidArgument("item state \(name) does not allow \(event)")
        }
    }
}
