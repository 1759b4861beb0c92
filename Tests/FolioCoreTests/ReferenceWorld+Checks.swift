import FolioCore
import FolioTesting
import Foundation

/// This device's tree as the core shows it now.
struct ReferenceObservation {
    /// Every path (the root aside) and what is there; a placeholder's content is that of the version it names.
    var entries: [String: ReferenceEntry] = ["": .directory]
    /// The node at each path (the root aside).
    var nodes: [String: Node] = [:]
    /// The path of each inode.
    var paths: [UInt64: String] = [FolioFileSystem.rootIno: ""]
    /// The contents of every conflict version kept.
    var conflictContents: Set<String> = []
}

extension ReferenceWorld {
    // MARK: Looking at this device

    /// Walks the whole tree of this device (without listing anything or downloading anything).
    func observe() throws -> ReferenceObservation {
        var observed = ReferenceObservation()
        var folders: [(ino: UInt64, path: String)] = [(FolioFileSystem.rootIno, "")]
        while let (folder, folderPath) = folders.popLast() {
            for (name, ino) in try children(of: folder) {
                let path = Self.join(folderPath, name)
                guard let node = fileSystem.node(ino) else { continue }
                observed.nodes[path] = node
                observed.paths[ino] = path
                switch node.kind {
                case .directory:
                    observed.entries[path] = .directory
                    folders.append((ino, path))
                case .file:
                    observed.entries[path] = .file(try content(of: node))
                    for version in try fileSystem.versions(of: ino) where !version.isCurrent {
                        observed.conflictContents.insert(try read(version: version.id, of: ino))
                    }
                default:
                    observed.entries[path] = .other(node.kind.rawValue)
                }
            }
        }
        return observed
    }

    /// The names and inodes in a folder (no virtual folders).
    func children(of folder: UInt64) throws -> [(name: String, ino: UInt64)] {
        let handle = try fileSystem.openDirectory(folder)
        defer { fileSystem.releaseDirectory(handle) }
        var found: [(name: String, ino: UInt64)] = []
        try fileSystem.readDirectory(handle, offset: 0, limit: 100_000) { entry, _ in
            if entry.name != ".", entry.name != "..", !VirtualFolder.isVirtual(entry.attributes.ino) {
                found.append((entry.name, entry.attributes.ino))
            }
            return true
        }
        return found
    }

    /// A file's current content: the local version, or the bytes the remote had at the version a placeholder
    /// names.
    func content(of node: Node) throws -> String {
        if node.state.hasLocalContent {
            guard node.contentFile != nil else { return "<\(node.state.name), without content>" }
            return try read(version: "current", of: node.ino)
        }
        guard let version = node.remoteVersion, let bytes = provider.content(ofVersion: version) else {
            return "<no content for version \(node.remoteVersion ?? "nil")>"
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The content of one version of a file (`current`, or a conflict version).
    func read(version: String, of ino: UInt64) throws -> String {
        let descriptor = try fileSystem.openVersion(ino, id: version)
        defer { close(descriptor) }
        return Self.readAll(descriptor)
    }

    /// Every byte of an open file, as text.
    static func readAll(_ descriptor: Int32, size: Int64? = nil) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while size.map({ bytes.count < $0 }) ?? true {
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(bytes.count)) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        if let size, bytes.count > Int(size) { bytes.removeLast(bytes.count - Int(size)) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads a file through the core as a process would (a placeholder is downloaded first).
    func readThroughCore(_ path: String) async throws -> String {
        let opened = try await fileSystem.open(
            try core.ino(path), flags: O_RDONLY, context: CoreHarness.context(200))
        defer { try? fileSystem.release(opened.handle) }
        let source = try fileSystem.readSource(opened.handle)
        if let pending = source.pending { try await pending.waitUntilPresent(0..<source.size) }
        return Self.readAll(source.fd, size: source.size)
    }

    // MARK: Looking at the remote

    /// The remote's tree: each item by path.
    func remoteTree() -> [String: RemoteItem] {
        let items = provider.items()
        let byID = Dictionary(items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var paths: [String: RemoteItem] = [:]
        for item in items {
            var components = [item.name]
            var parent = item.parentID
            while let id = parent, let folder = byID[id], components.count <= items.count {
                components.insert(folder.name, at: 0)
                parent = folder.parentID
            }
            paths[components.joined(separator: "/")] = item
        }
        return paths
    }

    /// The contents of every file on the remote.
    func remoteContents() -> Set<String> {
        Set(provider.items().compactMap { item in
            provider.content(of: item.id).map { String(decoding: $0, as: UTF8.self) }
        })
    }

    // MARK: Checks

    /// After every step: the tree is the model's (or becomes it, after a merge), and nothing is lost.
    func checkAfterStep() throws {
        let observed = try observe()
        if stepTookTree {
            model = observed.entries
        } else if observed.entries != model {
            throw failure("tree", "the tree differs from the model: " + Self.difference(model, observed.entries))
        }
        try checkNothingLost(observed)
    }

    /// Every content that must not be lost is current here, current on the remote, or a conflict version.
    func checkNothingLost(_ observed: ReferenceObservation) throws {
        var present = observed.conflictContents.union(remoteContents())
        for case .file(let content) in observed.entries.values { present.insert(content) }
        let lost = alive.subtracting(present)
        guard lost.isEmpty else {
            throw failure("lost", "lost without anyone replacing or removing them: "
                + lost.sorted().map(Self.tag).joined(separator: ", "))
        }
    }

    /// A content replaced or removed by a user who saw it: it may go.
    func kill(_ content: String?) {
        if let content { alive.remove(content) }
    }

    /// Runs a merge (`body`, returning whether it was applied) and checks that it kept every local change: a file
    /// with a local version not uploaded is still there with that content, and an item renamed, moved or made
    /// here and not uploaded is still where it was put. The model then takes the tree as the merge left it.
    func merging(_ what: String, _ body: () async throws -> Bool) async throws {
        let before = try observe()
        let applied = try await body()
        try checkMerge(what, before: before)
        if applied { stepWasDurable = true }
    }

    /// Checks what a merge left against the tree `before` it (see ``merging(_:_:)``); the model then takes the
    /// tree as it is.
    func checkMerge(_ what: String, before: ReferenceObservation) throws {
        let after = try observe()
        for (path, node) in before.nodes.sorted(by: { $0.key < $1.key }) {
            let now = after.paths[node.ino]
            if node.kind == .file, node.state.hasPendingLocalVersion {
                guard let now, let entry = after.entries[now] else {
                    throw failure("merge", "\(what) removed \(path), which has a local version not uploaded "
                        + "(\(node.state.name), \(before.entries[path].map { "\($0)" } ?? "?"))")
                }
                guard entry == before.entries[path] else {
                    throw failure("merge", "\(what) changed \(path), which has a local version not uploaded "
                        + "(\(node.state.name)): \(before.entries[path].map { "\($0)" } ?? "?") → \(entry)")
                }
            }
            if node.metadataDirty || node.needsCreate {
                guard let now, let moved = after.nodes[now], moved.parent == node.parent, moved.name == node.name
                else {
                    throw failure("merge", "\(what) undid the local change of \(path) (not uploaded yet): now "
                        + (now ?? "gone"))
                }
            }
        }
        stepTookTree = true
    }

    /// What differs between two trees, path by path.
    static func difference(_ expected: [String: ReferenceEntry], _ actual: [String: ReferenceEntry]) -> String {
        let paths = Set(expected.keys).union(actual.keys).sorted()
        return paths.compactMap { path -> String? in
            let (wanted, found) = (expected[path], actual[path])
            if wanted == found { return nil }
            let (shownWanted, shownFound) = (wanted.map { "\($0)" } ?? "nothing", found.map { "\($0)" } ?? "nothing")
            return "/\(path): expected \(shownWanted), found \(shownFound)"
        }.joined(separator: "; ")
    }
}
