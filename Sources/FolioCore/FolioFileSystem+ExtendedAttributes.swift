import Foundation

extension FolioFileSystem {
    /// The prefix of the attributes Folio itself provides.
    public static let folioAttributePrefix = "user.folio."

    private static let folioAttributes = [
        "user.folio.state", "user.folio.progress", "user.folio.id", "user.folio.container", "user.folio.pinned",
        "user.folio.version", "user.folio.versions", "user.folio.type",
    ]

    /// The value of extended attribute `name`.
    public func extendedAttribute(_ ino: UInt64, name: String) throws(FolioError) -> [UInt8] {
        enum Answer { case value([UInt8]), type(TypeAnswer) }
        let answer = try state.withLock { state throws(FolioError) -> Answer in
            guard let node = state.node(ino) else {
                if VirtualFolder.isVirtual(ino) { throw .noAttribute(name) }
                throw .notFound("inode \(ino)")
            }
            if name == "user.folio.type" || (name == Self.mimeTypeAttribute && node.xattrs[name] == nil) {
                return .type(typeAnswer(of: node))  // (a type by name is asked for outside the lock)
            }
            if name.hasPrefix(Self.folioAttributePrefix) {
                guard let value = folioAttribute(node, name: name, state: state) else { throw .noAttribute(name) }
                return .value(Array(value.utf8))
            }
            if let value = node.xattrs[name] { return .value(value) }
            throw .noAttribute(name)
        }
        switch answer {
        case .value(let value): return value
        case .type(let typeAnswer):
            guard let type = resolvedType(typeAnswer) else { throw .noAttribute(name) }
            return Array(type.utf8)
        }
    }

    private func folioAttribute(_ node: Node, name: String, state: borrowing State) -> String? {
        switch name {
        case "user.folio.state": return displayedState(of: node, state: state)
        case "user.folio.progress":
            if let progress = state.progress[node.ino] { return "\(progress.done)/\(progress.total)" }
            if let kept = state.partials[node.ino] { return "\(kept.present)/\(kept.size)" }
            return node.state.hasLocalContent || node.kind != .file ? "\(node.size)/\(node.size)" : "0/\(node.size)"
        case "user.folio.id": return node.itemID.rawValue
        case "user.folio.container": return node.container.rawValue
        case "user.folio.pinned": return node.pinned ? "1" : "0"
        case "user.folio.version": return node.remoteVersion
        case "user.folio.versions": return conflictVersionsAttribute(node, state: state)
        default: return nil  // (`user.folio.type`: see extendedAttribute(_:name:))
        }
    }

    /// The state `user.folio.state` and `folio status` show: a placeholder some of whose bytes are here (kept, or
    /// fetched by reads of a download nobody fetches more of now) is `partial`.
    func displayedState(of node: Node, state: borrowing State) -> String {
        if node.state == .placeholder, state.partials[node.ino] != nil || (state.progress[node.ino]?.done ?? 0) > 0 {
            return "partial"
        }
        return node.state.name
    }

    /// `user.folio.versions`: one line per conflict version of a conflicted item — its version, origin, time
    /// (ISO 8601), size and the file in the state folder that holds its content — so the versions can be read
    /// with `getfattr` and `cat`, without Folio's CLI. Absent when there are none.
    private func conflictVersionsAttribute(_ node: Node, state: borrowing State) -> String? {
        guard let conflicts = state.conflicts[node.itemID], !conflicts.isEmpty else { return nil }
        let format = ISO8601DateFormatter()
        return conflicts.sorted { $0.modificationTime > $1.modificationTime }.map { version in
            let time = Date(timeIntervalSince1970: Double(version.modificationTime.seconds))
            return [
                version.remoteVersion, "remote", format.string(from: time), String(version.size),
                cache.path(of: version.contentFile).string,
            ].joined(separator: "\t") + "\n"
        }.joined()
    }

    /// Names of all extended attributes of a node.
    public func extendedAttributeNames(_ ino: UInt64) throws(FolioError) -> [String] {
        let (folio, stored, type) = try state.withLock { state throws(FolioError) in
            guard let node = state.node(ino) else {
                if VirtualFolder.isVirtual(ino) { return ([String](), [String](), TypeAnswer.described(nil)) }
                throw .notFound("inode \(ino)")
            }
            let folio = Self.folioAttributes.filter { folioAttribute(node, name: $0, state: state) != nil }
            let stored = node.xattrs.keys.filter { !$0.hasPrefix(Self.folioAttributePrefix) }
            return (folio, stored, typeAnswer(of: node))
        }
        // The type's names, when there is a type (asked for outside the lock): `user.folio.type` last of Folio's.
        guard resolvedType(type) != nil else { return folio + stored.sorted() }
        let mime = stored.contains(Self.mimeTypeAttribute) ? [] : [Self.mimeTypeAttribute]
        return folio + ["user.folio.type"] + (stored + mime).sorted()
    }

    /// Sets an extended attribute. `user.folio.pinned` is settable (as ``setPinned(_:_:)``: a folder
    /// recursively); other `user.folio.*` are read-only;
    /// other `user.*` attributes are kept with the item; other namespaces are not supported.
    public func setExtendedAttribute(
        _ ino: UInt64, name: String, value: [UInt8], mustCreate: Bool, mustReplace: Bool
    ) throws(FolioError) {
        guard name.hasPrefix("user.") else { throw .notSupported("only user.* attributes are stored") }
        try refuseVirtual(ino)
        if name == "user.folio.pinned" {
            let text = String(decoding: value, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard text == "1" || text == "0" else { throw .invalidArgument("user.folio.pinned takes 1 or 0") }
            try setPinned(ino, text == "1")
            return
        }
        defer { announce([.inode(ino)]) }
        try state.withLock { state throws(FolioError) in
            guard var node = state.node(ino) else { throw .notFound("inode \(ino)") }
            if name.hasPrefix(Self.folioAttributePrefix) {
                throw .notPermitted("\(name) is maintained by Folio")
            } else {
                if mustCreate && node.xattrs[name] != nil { throw .exists(name) }
                if mustReplace && node.xattrs[name] == nil { throw .noAttribute(name) }
                guard value.count <= 65536 else { throw .range("attribute values are limited to 64 KiB") }
                node.xattrs[name] = value
            }
            node.changeTime = .now()
            if name == VirtualFolder.tagsAttribute { noteTagsChanged(&node, state: &state) }
            saveDeferred(node, state: &state)
        }
        if name == VirtualFolder.tagsAttribute { notifyUploader() }
    }

    /// Removes an extended attribute.
    public func removeExtendedAttribute(_ ino: UInt64, name: String) throws(FolioError) {
        try refuseVirtual(ino)
        defer { announce([.inode(ino)]) }
        try state.withLock { state throws(FolioError) in
            guard var node = state.node(ino) else { throw .notFound("inode \(ino)") }
            if name.hasPrefix(Self.folioAttributePrefix) { throw .notPermitted("\(name) is maintained by Folio") }
            guard node.xattrs.removeValue(forKey: name) != nil else { throw .noAttribute(name) }
            node.changeTime = .now()
            if name == VirtualFolder.tagsAttribute { noteTagsChanged(&node, state: &state) }
            saveDeferred(node, state: &state)
        }
        if name == VirtualFolder.tagsAttribute { notifyUploader() }
    }

    /// Keeps a change the store may learn of a moment later: in memory at once, in the store with the next group
    /// write. For attribute-only changes, and for an upload's outcome (lost in a crash, the upload is retried and
    /// the provider recognizes its own write by the retry tag).
    func saveDeferred(_ node: Node, state: inout State) {
        if state.nodes[node.ino] != nil {
            state.nodes[node.ino] = node
            deferPersistence(node.ino, state: &state)
        } else {
            state.orphans[node.ino] = node
        }
    }

    /// Persists a changed node (in the namespace or orphaned).
    func save(_ node: Node, state: inout State) throws(FolioError) {
        if state.nodes[node.ino] != nil {
            var batch = StoreBatch()
            batch.upserts.append(node)
            try persist(batch, state: &state)
            state.nodes[node.ino] = node
        } else {
            state.orphans[node.ino] = node
        }
    }
}
