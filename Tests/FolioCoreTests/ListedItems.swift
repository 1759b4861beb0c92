import FolioCore

/// A remote file as a listing or a change set names it (size 4, mode 0644, a fixed time).
func listedFile(_ id: String, in parent: ItemID? = nil, _ name: String, version: String = "v1") -> RemoteItem {
    RemoteItem(
        id: ItemID(id), container: .drive, parentID: parent, name: name, kind: .file, size: 4,
        modificationTime: Timestamp(seconds: 1_000, nanoseconds: 0), mode: 0o644, version: version)
}

/// A remote folder as a listing or a change set names it.
func listedFolder(_ id: String, in parent: ItemID? = nil, _ name: String) -> RemoteItem {
    RemoteItem(
        id: ItemID(id), container: .drive, parentID: parent, name: name, kind: .directory, size: 0,
        modificationTime: Timestamp(seconds: 1_000, nanoseconds: 0), mode: 0o755, version: "d1")
}
