import FolioCore

/// Handlers of attributes: `getattr`, `setattr` and the extended attributes.
extension FUSEHandlers {
    /// `getattr`, through the open handle if the kernel names one (its version's size).
    func getAttributes(_ ino: UInt64, handle: UInt64?, _ reply: Reply) {
        reply.attributes { try fileSystem.getAttributes(ino, handle: handle) }
    }

    /// `setattr`. A change of size may wait for the item's write session: from a task.
    func setAttributes(_ request: FUSERequest.SetAttributes, _ caller: FUSECaller, _ reply: Reply) {
        guard request.changes.size != nil else {
            reply.attributes { try fileSystem.setAttributesNow(request.ino, request.changes, handle: request.handle) }
            return
        }
        let context = context(caller)
        Task {
            do {
                reply.attributes(
                    try await fileSystem.setAttributes(
                        request.ino, request.changes, handle: request.handle, context: context))
            } catch {
                reply.fail(error)
            }
        }
    }

    /// `setxattr`.
    func setExtendedAttribute(_ request: FUSERequest.SetExtendedAttribute, _ reply: Reply) {
        reply.succeed {
            try fileSystem.setExtendedAttribute(
                request.ino, name: request.name, value: request.value, mustCreate: request.mustCreate,
                mustReplace: request.mustReplace)
        }
    }

    /// `getxattr`.
    func extendedAttribute(_ ino: UInt64, name: String, size: Int, _ reply: Reply) {
        do {
            reply.sized(try fileSystem.extendedAttribute(ino, name: name), size: size)
        } catch {
            reply.fail(error)
        }
    }

    /// `listxattr`: the names, each ended by a NUL.
    func extendedAttributeNames(_ ino: UInt64, size: Int, _ reply: Reply) {
        do {
            var bytes: [UInt8] = []
            for name in try fileSystem.extendedAttributeNames(ino) {
                bytes.append(contentsOf: name.utf8)
                bytes.append(0)
            }
            reply.sized(bytes, size: size)
        } catch {
            reply.fail(error)
        }
    }

    /// `removexattr`.
    func removeExtendedAttribute(_ ino: UInt64, name: String, _ reply: Reply) {
        reply.succeed { try fileSystem.removeExtendedAttribute(ino, name: name) }
    }
}
