extension FolioFileSystem {
    /// Puts an external reference named `name` into folder `parent` that opens the item at `target` in place:
    /// the same inode, content, versions and attributes (DESIGN.md §2 "References"). What granting a document
    /// to an app does. Only documents (files) are referenced: the kernel allows a folder at one path only.
    @discardableResult
    public func addReference(to target: UInt64, parent: UInt64, name: String) throws(FolioError) -> Attributes {
        let result = try state.withLock { state throws(FolioError) -> Attributes in
            guard let item = state.nodes[target] else { throw .notFound("inode \(target)") }
            guard item.kind == .file else {
                throw .invalidArgument("only documents can be referenced; \(item.name) is a \(item.kind.rawValue)")
            }
            try refuseVirtual(parent)
            guard let folder = state.nodes[parent] else { throw .notFound("folder \(parent)") }
            guard folder.kind == .directory else { throw .notDirectory(folder.name) }
            if state.isTaken(parent, name) { throw .exists(name) }
            try configuration.namePolicy.validate(name)
            let reference = ExternalReference(parent: parent, name: name, target: item.itemID)
            var batch = StoreBatch()
            batch.referenceUpserts = [reference]
            let updatedFolder = touched(folder)
            batch.upserts = [updatedFolder]
            try stage(batch, state: &state)
            state.nodes[parent] = updatedFolder
            state.insertReference(reference)
            return attributes(of: item, state: state)
        }
        // Not a request through the mount: the kernel learns of the new name and link count from us.
        invalidator?.invalidateInode(parent)
        invalidator?.invalidateInode(target)
        return result
    }

    /// Removes a reference; the item it opened stays where it is.
    func removeReference(at location: ExternalReference.Location, state: inout State) throws(FolioError) {
        var batch = StoreBatch()
        batch.referenceDeletes = [location]
        if let folder = state.nodes[location.parent] { batch.upserts = [touched(folder)] }
        try stage(batch, state: &state)
        for folder in batch.upserts { state.nodes[folder.ino] = folder }
        state.removeReference(at: location)
    }

    /// Renames or moves a reference (the item it opens stays where it is). The destination may hold a file or
    /// another reference, which is replaced, as `rename(2)` replaces a file.
    func moveReference(
        from source: ExternalReference.Location, to destination: ExternalReference.Location, flags: RenameFlags,
        state: inout State
    ) throws(FolioError) {
        guard let target = state.reference(source.parent, source.name) else { throw .notFound(source.name) }
        if source == destination { return }
        guard let folder = state.nodes[destination.parent] else { throw .notFound("folder \(destination.parent)") }
        guard folder.kind == .directory else { throw .notDirectory(folder.name) }
        try configuration.namePolicy.validate(destination.name)
        var batch = StoreBatch()
        if let existing = state.entry(destination.parent, destination.name) {
            // Two names of one item: rename(2) does nothing.
            if existing == state.byItemID[target] { return }
            if flags.contains(.noReplace) { throw .exists(destination.name) }
            if state.reference(destination.parent, destination.name) != nil {
                // Replaced by the upsert below (the store replaces the row at that location).
            } else if let replaced = state.nodes[existing] {
                guard replaced.kind != .directory else { throw .isDirectory(destination.name) }
                try remove(replaced, batch: &batch, state: &state)
                batch = StoreBatch()
            }
        }
        batch.referenceDeletes.append(source)
        batch.referenceUpserts = [ExternalReference(parent: destination.parent, name: destination.name, target: target)]
        for ino in Set([source.parent, destination.parent]) {
            if let folder = state.nodes[ino] { batch.upserts.append(touched(folder)) }
        }
        try stage(batch, state: &state)
        for folder in batch.upserts { state.nodes[folder.ino] = folder }
        state.removeReference(at: source)
        state.removeReference(at: destination)
        for reference in batch.referenceUpserts { state.insertReference(reference) }
    }

    /// `folder` with its modification and change times set to now (an entry was added or removed).
    private func touched(_ folder: Node) -> Node {
        var folder = folder
        let now = Timestamp.now()
        folder.modificationTime = now
        folder.changeTime = now
        return folder
    }
}
