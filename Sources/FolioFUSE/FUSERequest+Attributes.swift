import CFUSE
import FolioCore

extension FUSERequest {
    /// `setattr`: new permissions, owner, size or times.
    public struct SetAttributes: Sendable {
        /// The item.
        public var ino: UInt64
        /// What changes.
        public var changes: AttributeChanges
        /// The open handle the change goes through, when the kernel names one (`ftruncate`).
        public var handle: UInt64?

        init(
            _ arguments: CArguments, _ ino: fuse_ino_t, _ attr: UnsafeMutablePointer<stat>?, _ toSet: Int32,
            _ info: UnsafeMutablePointer<fuse_file_info>?
        ) throws(FolioError) {
            guard let attr else { throw .invalidArgument("the kernel passed no attributes to set") }
            self.ino = arguments.node(ino)
            changes = Self.changes(attr.pointee, toSet: toSet)
            handle = arguments.handle(info)
        }

        private static func changes(_ attr: stat, toSet: Int32) -> AttributeChanges {
            var changes = AttributeChanges()
            if toSet & FUSE_SET_ATTR_MODE != 0 { changes.permissions = attr.st_mode & 0o7777 }
            if toSet & FUSE_SET_ATTR_UID != 0 { changes.uid = attr.st_uid }
            if toSet & FUSE_SET_ATTR_GID != 0 { changes.gid = attr.st_gid }
            if toSet & FUSE_SET_ATTR_SIZE != 0 { changes.size = Int64(attr.st_size) }
            if toSet & FUSE_SET_ATTR_ATIME_NOW != 0 {
                changes.accessTime = .now()
            } else if toSet & FUSE_SET_ATTR_ATIME != 0 {
                changes.accessTime = Timestamp(attr.st_atim)
            }
            if toSet & FUSE_SET_ATTR_MTIME_NOW != 0 {
                changes.modificationTime = .now()
            } else if toSet & FUSE_SET_ATTR_MTIME != 0 {
                changes.modificationTime = Timestamp(attr.st_mtim)
            }
            return changes
        }
    }

    /// `setxattr` of `name` on `ino`.
    public struct SetExtendedAttribute: Sendable {
        /// The item.
        public var ino: UInt64
        /// The attribute's name.
        public var name: String
        /// Its new value.
        public var value: [UInt8]
        /// `XATTR_CREATE`: fail if it exists.
        public var mustCreate: Bool
        /// `XATTR_REPLACE`: fail if it does not.
        public var mustReplace: Bool

        init(
            _ arguments: CArguments, _ ino: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?,
            _ size: Int, _ flags: Int32
        ) throws(FolioError) {
            self.ino = arguments.node(ino)
            self.name = try arguments.newName(name)
            self.value = Array(try arguments.bytes(value, size))
            mustCreate = flags & cfuse_xattr_create != 0
            mustReplace = flags & cfuse_xattr_replace != 0
        }
    }
}
