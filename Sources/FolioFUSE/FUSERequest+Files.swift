import CFUSE
import FolioCore

extension FUSERequest {
    /// `open` of a file, or `opendir` of a folder.
    public struct Open: Sendable {
        /// The file or folder.
        public var ino: UInt64
        /// The open's flags, and what its answer is built from.
        public var info: FileInfo

        init(_ arguments: CArguments, _ ino: fuse_ino_t, _ info: UnsafeMutablePointer<fuse_file_info>?)
            throws(FolioError)
        {
            self.ino = arguments.node(ino)
            self.info = try arguments.fileInfo(info)
        }
    }

    /// `create`: a new file at `at`, opened.
    public struct Create: Sendable {
        /// Where.
        public var at: Name
        /// The permission bits.
        public var permissions: UInt32
        /// The open's flags, and what its answer is built from.
        public var info: FileInfo

        init(
            _ arguments: CArguments, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ mode: mode_t,
            _ info: UnsafeMutablePointer<fuse_file_info>?
        ) throws(FolioError) {
            at = try arguments.new(parent, name)
            permissions = mode & 0o7777
            self.info = try arguments.fileInfo(info)
        }
    }

    /// `read` of `size` bytes at `offset` through an open handle.
    public struct Read: Sendable {
        /// The open handle.
        public var handle: UInt64
        /// Where the read starts.
        public var offset: Int64
        /// How many bytes at most.
        public var size: Int

        init(_ arguments: CArguments, _ size: Int, _ offset: off_t, _ info: UnsafeMutablePointer<fuse_file_info>?)
            throws(FolioError)
        {
            handle = try arguments.openHandle(info)
            self.offset = Int64(offset)
            self.size = size
        }
    }

    /// `write` of `bytes` at `offset` through an open handle.
    public struct Write {
        /// The open handle.
        public var handle: UInt64
        /// Where the bytes go.
        public var offset: Int64
        /// The bytes, in libfuse's buffer: valid during the callback only.
        public var bytes: UnsafeRawBufferPointer

        init(
            _ arguments: CArguments, _ buffer: UnsafePointer<CChar>?, _ size: Int, _ offset: off_t,
            _ info: UnsafeMutablePointer<fuse_file_info>?
        ) throws(FolioError) {
            handle = try arguments.openHandle(info)
            self.offset = Int64(offset)
            bytes = try arguments.bytes(buffer, size)
        }
    }

    /// `fallocate` of `length` bytes at `offset`.
    public struct Allocate: Sendable {
        /// The open handle.
        public var handle: UInt64
        /// The change the mode asks for; `nil` for modes Folio does not support (`EOPNOTSUPP`).
        public var change: SpaceChange?
        /// Where the range starts.
        public var offset: Int64
        /// How long it is.
        public var length: Int64

        init(
            _ arguments: CArguments, _ mode: Int32, _ offset: off_t, _ length: off_t,
            _ info: UnsafeMutablePointer<fuse_file_info>?
        ) throws(FolioError) {
            handle = try arguments.openHandle(info)
            let keepSize: Int32 = 0x01, punchHole: Int32 = 0x02, zeroRange: Int32 = 0x10
            change = switch mode {
            case 0: .allocate(keepSize: false)
            case keepSize: .allocate(keepSize: true)
            case punchHole | keepSize: .punchHole
            case zeroRange: .zeroRange(keepSize: false)
            case zeroRange | keepSize: .zeroRange(keepSize: true)
            default: nil
            }
            self.offset = Int64(offset)
            self.length = Int64(length)
        }
    }

    /// `lseek` from `offset` to the next data or hole.
    public struct Seek: Sendable {
        /// The open handle.
        public var handle: UInt64
        /// Data or hole; `nil` for the seeks the kernel answers itself (`SEEK_SET`, `SEEK_CUR`, `SEEK_END`).
        public var target: SeekTarget?
        /// Where the search starts.
        public var offset: Int64

        init(_ arguments: CArguments, _ offset: off_t, _ whence: Int32, _ info: UnsafeMutablePointer<fuse_file_info>?)
            throws(FolioError)
        {
            handle = try arguments.openHandle(info)
            target = switch whence {
            case 3: .data  // SEEK_DATA
            case 4: .hole  // SEEK_HOLE
            default: nil
            }
            self.offset = Int64(offset)
        }
    }
}
