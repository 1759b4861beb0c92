import Foundation
import FolioCore
import FolioStore

/// Sample data and temporary folders for the store tests.
enum StoreFixtures {
    /// A fresh, empty temporary folder.
    static func makeTemporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("folio-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A plain file node with ordinary values.
    static func node(
        _ ino: UInt64, name: String? = nil, parent: UInt64 = 1, state: ItemState = .materialized
    ) -> Node {
        Node(
            ino: ino, itemID: ItemID("item-\(ino)"), container: .drive, parent: parent, name: name ?? "file-\(ino).txt",
            kind: .file, size: Int64(ino) * 10, modificationTime: Timestamp(seconds: 1_700_000_000, nanoseconds: 5),
            mode: 0o644, uid: 1000, gid: 1000, state: state, contentFile: "c\(ino)", generation: 1,
            remoteVersion: "v1"
        )
    }

    /// A batch that upserts `nodes`.
    static func batch(upserting nodes: [Node]) -> StoreBatch {
        var batch = StoreBatch()
        batch.upserts = nodes
        return batch
    }

    /// Every item state, with extreme associated values.
    static let allStates: [ItemState] = [
        .placeholder, .materializing, .materialized, .dirty(generation: 0), .dirty(generation: UInt64.max),
        .uploading(generation: 42), .uploading(generation: UInt64.max - 1), .conflicted, .failed(reason: ""),
        .failed(reason: "provider said «no» ✋\nline two"),
    ]

    /// Nodes that together use every field at unusual values: each state, each kind, extreme integers,
    /// optional fields set and unset, unicode names (including decomposed forms) and binary xattrs.
    static func exhaustiveNodes() -> [Node] {
        let names = [
            "plain.txt", "héllo wörld 📄.md", "日本語のファイル", "e\u{301}cole (decomposed)", "\u{e9}cole (composed)",
            "tab\tand newline\n", "emoji 👩‍👩‍👧‍👦", String(repeating: "ü", count: 255), " leading space", "x",
        ]
        let kinds: [ItemKind] = [.file, .directory, .symlink, .fifo, .socket]
        var nodes: [Node] = []
        for (index, state) in allStates.enumerated() {
            let ino = UInt64(index + 2)
            let kind = kinds[index % kinds.count]
            nodes.append(Node(
                ino: ino,
                itemID: index == 0 ? ItemID.root(of: ContainerID("com.example.notes")) : ItemID.generate(),
                container: index.isMultiple(of: 2) ? .drive : ContainerID("com.example.notes"),
                parent: index == 0 ? 0 : 1,
                name: names[index % names.count],
                kind: kind,
                size: index == 1 ? Int64.max : Int64(index * 1000),
                modificationTime: Timestamp(seconds: -86_400 * Int64(index), nanoseconds: 999_999_999),
                changeTime: Timestamp(seconds: Int64(index), nanoseconds: 1),
                accessTime: Timestamp(seconds: Int64.max / 2, nanoseconds: 0),
                mode: index == 3 ? 0o7777 : 0o640,
                uid: index == 4 ? UInt32.max : UInt32(index),
                gid: index == 5 ? UInt32.max : 0,
                symlinkTarget: kind == .symlink ? "../target/ünïcode ✓" : nil,
                state: state,
                contentFile: state.hasLocalContent ? "content-\(index)" : nil,
                generation: index == 6 ? UInt64.max : UInt64(index),
                remoteVersion: index.isMultiple(of: 3) ? nil : "etag-\"\(index)\"",
                metadataDirty: index.isMultiple(of: 2),
                pinned: index.isMultiple(of: 3),
                xattrs: index.isMultiple(of: 2) ? [:] : [
                    "user.binary": [0, 1, 2, 0, 255, 254, 0],
                    "user.empty": [],
                    "user.ünïcode ✓": Array("value ✓".utf8),
                    "user.big": (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) },
                ],
                dirtySequence: index == 7 ? UInt64.max : UInt64(index * 3)
            ))
        }
        nodes.append(Node(
            ino: UInt64.max, itemID: ItemID("max-ino"), container: .drive, parent: UInt64.max - 1, name: "max",
            kind: .file, modificationTime: Timestamp(seconds: 0, nanoseconds: 0), mode: 0, state: .placeholder
        ))
        return nodes
    }
}
