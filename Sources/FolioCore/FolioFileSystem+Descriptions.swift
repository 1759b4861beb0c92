import Foundation
import SystemPackage

/// A service that describes content (type, thumbnails) and keeps the desktop's thumbnail cache right: told when
/// nodes were stored or removed, it takes them with ``FolioFileSystem/takeDescriptionWork()``.
public protocol ContentDescribing: Sendable {
    /// Nodes were stored (their content, version, name or place may have changed) or removed. Called with the
    /// core's lock held: it must only note the call (signal a wake-up) and return.
    func nodesChanged()

    /// The type a file's name alone gives, for a file whose content was never described here (a placeholder):
    /// a type the name is sure of, which no thumbnailer handles (a description of the content would say no
    /// more), else `nil`. Asked when it is read (`user.mime_type`), never stored: a walk of a big tree of
    /// placeholders describes nothing. Called without the core's lock.
    func typeOfName(_ name: String) -> String?
}

extension ContentDescribing {
    /// By default, names say nothing.
    public func typeOfName(_ name: String) -> String? { nil }
}

extension FolioFileSystem {
    /// Where a node keeps the description of its content (``ContentDescription``, JSON): among its stored
    /// attributes, under a name `listxattr` never shows (names of the `user.folio.` prefix are Folio's own).
    static let descriptionAttribute = "user.folio.description"
    /// The Shared MIME-info spec's attribute for a file's type; a placeholder shows the type Folio decided.
    public static let mimeTypeAttribute = "user.mime_type"

    /// Connects the service that describes content.
    public func connect(describer: any ContentDescribing) {
        // Not in `hooks`: it is called with the state's lock held, and `hooks` is taken alone.
        describerHook.withLock { $0 = describer }
    }

    /// The nodes stored or removed since the last call (a removed node is no longer in ``node(_:)``).
    public func takeDescriptionWork() -> Set<UInt64> {
        state.withLock { state in
            defer { state.describeWanted.removeAll() }
            return state.describeWanted
        }
    }

    /// How many nodes wait for the describer (``takeDescriptionWork()``): it waits while this grows (a walk).
    public var descriptionWorkCount: Int {
        state.withLock { $0.describeWanted.count }
    }

    /// Notes the nodes a store batch writes or deletes for the describer, and wakes it when the set was empty.
    func noteDescriptionWork(_ inos: some Sequence<UInt64>, state: inout State) {
        let wasEmpty = state.describeWanted.isEmpty
        state.describeWanted.formUnion(inos)
        guard wasEmpty, !state.describeWanted.isEmpty, let describer = describerHook.withLock({ $0 }) else { return }
        describer.nodesChanged()
    }

    /// What the describer needs of each of `inos` (see ``DescriptionSubject``), in one take of the lock; a node
    /// that is gone has no entry.
    public func descriptionSubjects(_ inos: some Sequence<UInt64>) -> [UInt64: DescriptionSubject] {
        state.withLock { state in
            var subjects: [UInt64: DescriptionSubject] = [:]
            for ino in inos {
                guard let node = state.node(ino) else { continue }
                subjects[ino] = subject(of: node)
            }
            return subjects
        }
    }

    /// ``descriptionSubjects(_:)`` of one node.
    private func subject(of node: Node) -> DescriptionSubject {
        switch node.kind {
        case .directory:
            return .folder(place: "\(node.parent)/\(node.name)")
        case .file:
            if let description = currentDescription(of: node) { return .described(description) }
            guard let version = node.remoteVersion, !node.state.hasPendingLocalVersion else { return .other }
            if node.state.hasLocalContent, node.contentFile != nil { return .describable }
            return .placeholder(
                PlaceholderToDescribe(
                    ino: node.ino, id: node.itemID, container: node.remoteContainer ?? node.container,
                    version: version, name: node.name))
        default:
            return .other
        }
    }

    /// The description of a file's current content (its provider version, with no local change waiting); `nil`
    /// if none was recorded for that version.
    public func contentDescription(of ino: UInt64) -> ContentDescription? {
        state.withLock { state in state.node(ino).flatMap { currentDescription(of: $0) } }
    }

    func currentDescription(of node: Node) -> ContentDescription? {
        guard node.kind == .file, let version = node.remoteVersion, !node.state.hasPendingLocalVersion,
            let encoded = node.xattrs[Self.descriptionAttribute],
            let description = try? JSONDecoder().decode(ContentDescription.self, from: Data(encoded)),
            description.version == version
        else { return nil }
        return description
    }

    /// Records the description of a file's content, if the file is still at the version it describes.
    @discardableResult
    public func recordDescription(_ description: ContentDescription, of ino: UInt64) -> Bool {
        guard let encoded = try? JSONEncoder().encode(description) else { return false }
        return state.withLock { state in
            guard var node = state.node(ino), node.kind == .file, node.remoteVersion == description.version else {
                return false
            }
            guard node.xattrs[Self.descriptionAttribute] != Array(encoded) else { return true }
            node.xattrs[Self.descriptionAttribute] = Array(encoded)
            saveDeferred(node, state: &state)
            return true
        }
    }

    /// The content of a file that can be described now: committed here, at the provider version it was uploaded
    /// as or downloaded from, and whole. The file in the content cache is never changed (a new version is a new
    /// file); it may be removed (evicted) while it is read, which fails the read.
    public func describableContent(of ino: UInt64) -> (file: FilePath, name: String, version: String)? {
        state.withLock { state in
            guard let node = state.node(ino), node.kind == .file, let version = node.remoteVersion,
                node.state.hasLocalContent, !node.state.hasPendingLocalVersion, let file = node.contentFile
            else { return nil }
            return (cache.path(of: file), node.name, version)
        }
    }

    /// What the type of a node's current content is, as far as the core knows under its lock.
    enum TypeAnswer {
        /// The description of its content gives this type (`nil`: it has none).
        case described(String?)
        /// Not described: the type the name alone gives, if any (``ContentDescribing/typeOfName(_:)``).
        case byName(String)
    }

    /// ``TypeAnswer`` of `node`: a file at a provider version, with no local change waiting and no description of
    /// that version, is typed by its name (outside the lock).
    func typeAnswer(of node: Node) -> TypeAnswer {
        if let description = currentDescription(of: node) { return .described(description.contentType) }
        guard node.kind == .file, node.remoteVersion != nil, !node.state.hasPendingLocalVersion else {
            return .described(nil)
        }
        return .byName(node.name)
    }

    /// The type a ``TypeAnswer`` gives, asking the describer for a name's (call without the lock).
    func resolvedType(_ answer: TypeAnswer) -> String? {
        switch answer {
        case .described(let type): return type
        case .byName(let name): return describerHook.withLock { $0 }?.typeOfName(name)
        }
    }
}
