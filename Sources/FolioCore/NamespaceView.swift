/// One way of looking at the filesystem's single state (DESIGN.md §2 "Tree"). Every view shares the items,
/// versions, coordination and upload queue; a view only decides where its root is, and so what can be reached.
public enum NamespaceView: Hashable, Sendable, CustomStringConvertible {
    /// The full view: the Drive container's documents plus one folder per public app container.
    case full
    /// An app's view: its own container (public or private) is the root; external references granted to the
    /// app are inside it, where the user put them.
    case app(ContainerID)

    /// How the view is named in logs and `folio status`.
    public var description: String {
        switch self {
        case .full: return "full view"
        case .app(let container): return "app view of \(container)"
        }
    }
}
