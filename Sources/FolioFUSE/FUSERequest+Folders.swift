import CFUSE
import FolioCore

extension FUSERequest {
    /// `readdir` or `readdirplus`: entries from `offset` on, as many as fit in `size` bytes.
    public struct ReadDirectory: Sendable {
        /// The listing's handle (from `opendir`).
        public var handle: UInt64
        /// The offset the kernel got with the last entry it has (0: from the start).
        public var offset: Int
        /// The kernel's buffer size.
        public var size: Int
        /// `readdirplus`: each entry with its attributes, and a lookup of it.
        public var plus: Bool

        init(
            _ arguments: CArguments, _ size: Int, _ offset: off_t, _ info: UnsafeMutablePointer<fuse_file_info>?,
            plus: Bool = false
        ) throws(FolioError) {
            handle = try arguments.openHandle(info)
            self.offset = offset
            self.size = size
            self.plus = plus
        }
    }
}
