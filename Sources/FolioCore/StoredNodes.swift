/// What of the store is not in memory yet, for a state opened on its working set
/// (``MetadataStore/loadWorkingSet()``, ``FileSystemConfiguration/loadsOnDemand``): the plain files at rest of
/// some folders, read with their folder when it is first needed (a lookup, a listing, a change, a merge that
/// names them) or by the background reader (``FolioFileSystem/loadStoredFolders(count:)``).
///
/// The rule that keeps it right: until a folder's stored children are read, the store is what is true of them and
/// nothing in memory has changed them (every change of a folder's children reads them first); once read, memory
/// is, and they are never read again. A row read then is new to memory unless its node was read at start or made
/// in this run (``admits(_:)``): memory's version of those is newer than any row (a row whose removal has not
/// reached the store yet must not come back).
struct StoredNodes: Sendable {
    /// Folders whose stored children may not all be in memory.
    private(set) var folders: Set<UInt64> = []
    /// The nodes read at start, while some folders are still to read.
    private var readAtStart: Set<UInt64> = []
    /// The first inode number this run gives out: nodes from it on were made here.
    private var firstNewIno: UInt64 = .max
    /// Folders that left memory before their stored children were read (``forget(_:)``), until
    /// ``takeDeparted()``: the content files of those children are nobody's any more.
    private var departed: [UInt64] = []

    /// Nothing left in the store only (a state read whole).
    init() {}

    /// After reading the working set `nodes`: every folder among them may hold more; `firstNewIno` is the
    /// largest inode stored plus one.
    init(workingSet nodes: [Node], firstNewIno: UInt64) {
        for node in nodes {
            readAtStart.insert(node.ino)
            if node.kind == .directory { folders.insert(node.ino) }
        }
        self.firstNewIno = firstNewIno
        if folders.isEmpty { readAtStart = [] }
    }

    /// Whether every stored node is in memory.
    var isComplete: Bool { folders.isEmpty }

    /// Some folder still to read (the background reader's next).
    var next: UInt64? { folders.first }

    /// Takes `folder` for reading: `true` once, when its stored children are still to read.
    mutating func take(_ folder: UInt64) -> Bool {
        folders.remove(folder) != nil
    }

    /// Puts back a folder taken with ``take(_:)`` whose rows could not be read.
    mutating func giveBack(_ folder: UInt64) {
        folders.insert(folder)
    }

    /// The folder `ino` left memory (removed): its stored children went with it in the store.
    mutating func forget(_ ino: UInt64) {
        if folders.remove(ino) != nil { departed.append(ino) }
        releaseIfComplete()
    }

    /// The folders that left memory unread since the last call (their stored rows still there until the group
    /// write that removes them).
    mutating func takeDeparted() -> [UInt64] {
        defer { departed = [] }
        return departed
    }

    /// Frees what is kept for ``admits(_:)`` once nothing is left to read (after the last folder's rows).
    mutating func releaseIfComplete() {
        if folders.isEmpty && !readAtStart.isEmpty { readAtStart = [] }
    }

    /// Whether a row read from a folder taken with ``take(_:)`` is a node memory does not have yet.
    func admits(_ node: Node) -> Bool {
        node.ino < firstNewIno && !readAtStart.contains(node.ino)
    }
}
