import CFUSE
import FolioCore
import Glibc

extension FUSERequest {
    /// `mknod`: a regular file, FIFO, socket or device node at `at`.
    public struct MakeNode: Sendable {
        /// Where.
        public var at: Name
        /// What kind of node; `nil` for a kind Folio does not make.
        public var kind: ItemKind?
        /// The permission bits.
        public var permissions: UInt32
        /// A device node's device number.
        public var device: UInt64

        init(
            _ arguments: CArguments, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ mode: mode_t,
            _ device: dev_t
        ) throws(FolioError) {
            at = try arguments.new(parent, name)
            kind = switch mode & S_IFMT {
            case S_IFIFO: .fifo
            case S_IFSOCK: .socket
            case S_IFCHR: .characterDevice
            case S_IFBLK: .blockDevice
            case S_IFREG: .file
            default: nil
            }
            permissions = mode & 0o7777
            self.device = UInt64(device)
        }
    }

    /// `mkdir`: a folder at `at`.
    public struct MakeDirectory: Sendable {
        /// Where.
        public var at: Name
        /// The permission bits.
        public var permissions: UInt32

        init(_ arguments: CArguments, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ mode: mode_t)
            throws(FolioError)
        {
            at = try arguments.new(parent, name)
            permissions = mode & 0o7777
        }
    }

    /// `rename` of the item at `from` to `to`.
    public struct Rename: Sendable {
        /// The item's name now.
        public var from: Name
        /// Its new name.
        public var to: Name
        /// `RENAME_NOREPLACE`, `RENAME_EXCHANGE`.
        public var flags: RenameFlags

        init(
            _ arguments: CArguments, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ newParent: fuse_ino_t,
            _ newName: UnsafePointer<CChar>?, _ flags: UInt32
        ) throws(FolioError) {
            from = try arguments.existing(parent, name)
            to = try arguments.new(newParent, newName)
            self.flags = RenameFlags(rawValue: flags)
        }
    }
}
