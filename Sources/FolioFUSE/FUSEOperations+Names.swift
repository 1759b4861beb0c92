import FolioCore

extension FUSEOperations {
    /// A name the kernel passed, as a string. Folio stores names as UTF-8 and nothing else: a name whose bytes
    /// are not UTF-8 would be repaired by `String(cString:)` into another name (two such names onto one item),
    /// so instead `reply` fails with `error` and the result is `nil`.
    static func name(
        _ raw: UnsafePointer<CChar>, _ reply: Reply, orFail error: (String) -> FolioError
    ) -> String? {
        if let name = String(validatingCString: raw) { return name }
        reply.fail(error("the name is not valid UTF-8; Folio stores only UTF-8 names"))
        return nil
    }

    /// The name of an item that may exist: no item has a name that is not UTF-8 (`ENOENT`).
    static func existingName(_ raw: UnsafePointer<CChar>, _ reply: Reply) -> String? {
        name(raw, reply) { .notFound($0) }
    }

    /// The name of an item to create or rename to: one that is not UTF-8 is refused (`EINVAL`).
    static func newName(_ raw: UnsafePointer<CChar>, _ reply: Reply) -> String? {
        name(raw, reply) { .invalidArgument($0) }
    }
}
