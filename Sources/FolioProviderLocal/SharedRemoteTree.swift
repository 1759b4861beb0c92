import FolioCore
import Glibc
import Synchronization
import SystemPackage

/// The ``RemoteTree`` of one remote directory behind its lock, shared by every ``LocalProvider`` of this
/// process on that directory, so their mutations are serialized together and they share one id index; each
/// hold also takes the remote's ``RemoteLock``, which serializes them with every other process on the remote.
final class SharedRemoteTree: Sendable {
    /// A registry entry that does not keep the tree alive.
    private struct WeakReference: Sendable {
        weak var tree: SharedRemoteTree?
    }

    /// The trees in use, by the canonical path of their remote directory.
    private static let registry = Mutex<[String: WeakReference]>([:])

    /// The tree.
    private let tree: Mutex<RemoteTree>
    /// The lock shared with the other processes on this remote.
    private let remoteLock: RemoteLock

    /// Wraps a tree.
    private init(_ tree: RemoteTree) {
        self.tree = Mutex(tree)
        remoteLock = RemoteLock(layout: tree.layout)
    }

    /// The tree of the remote at `layout`, shared with the other providers of this process on it.
    static func forRemote(at layout: RemoteLayout) throws -> SharedRemoteTree {
        let key = canonicalPath(layout.root)
        return try registry.withLock { entries in
            if let existing = entries[key]?.tree { return existing }
            entries = entries.filter { $0.value.tree != nil }
            let created = SharedRemoteTree(try RemoteTree(layout: layout))
            entries[key] = WeakReference(tree: created)
            return created
        }
    }

    /// Runs `body` on the tree under its lock (and the remote's, see ``RemoteLock``). Never call it from inside
    /// `body`, nor `await` inside. What `body` recorded in an adopted folder's id map is saved before the locks
    /// are let go, also when it failed. The records of changes queued by `body` are appended to their journals
    /// before the locks are let go, also when `body` fails; records that cannot be appended (a full disk) stay
    /// queued for the next hold, and do not fail a change that was made.
    func withLock<Value: Sendable>(_ body: (inout RemoteTree) throws -> Value) throws -> Value {
        try tree.withLock { tree in
            try remoteLock.withExclusiveLock {
                defer { try? tree.flushJournal() }
                let outcome = Result { try body(&tree) }
                try tree.saveItemIDs()
                return try outcome.get()
            }
        }
    }

    /// Runs `body` on the tree under its lock only, without the remote's: for what concerns this process alone
    /// (its watchers), never for a look at the remote that must be atomic with other processes.
    func withoutRemoteLock<Value: Sendable>(_ body: (inout RemoteTree) -> Value) -> Value {
        tree.withLock { tree in body(&tree) }
    }

    /// The path with symlinks resolved (so two spellings of one directory share a tree), or as given.
    private static func canonicalPath(_ path: FilePath) -> String {
        guard let resolved = realpath(path.string, nil) else { return path.lexicallyNormalized().string }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
