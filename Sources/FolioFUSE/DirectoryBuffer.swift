import CFUSE
import FolioCore

/// The entries of one `readdir` or `readdirplus` answer, packed as the kernel reads them, and the inodes a
/// `readdirplus` hands out (each one a lookup the kernel counts).
struct DirectoryBuffer {
    private let request: fuse_req_t
    private let plus: Bool
    private let cacheTimeout: Double
    private var bytes: [CChar]
    private var used = 0
    /// The inodes handed out with their attributes (every entry but `.` and `..` of a `readdirplus`).
    private(set) var handedOut: [UInt64] = []

    /// An empty buffer of `size` bytes for `reply`'s request.
    init(for reply: Reply, size: Int, plus: Bool) {
        request = reply.request
        self.plus = plus
        cacheTimeout = reply.cacheTimeout
        bytes = [CChar](repeating: 0, count: size)
    }

    /// How many entries might fit at most (the smallest entry is 32 bytes, 136 with attributes).
    var capacity: Int { bytes.count / (plus ? 136 : 32) + 1 }

    /// Adds `entry`, whose successor is at offset `next`; `false` if it does not fit.
    mutating func add(_ entry: DirectoryEntry, next: Int) -> Bool {
        let remaining = bytes.count - used
        let isDots = entry.name == "." || entry.name == ".."
        let (request, plus, cacheTimeout, used) = (request, plus, cacheTimeout, used)
        let needed: Int = bytes.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress else { return remaining + 1 }
            return entry.name.withCString { name in
                if plus {
                    var param = fuse_entry_param()
                    if isDots {
                        param.attr = entry.attributes.statValue
                    } else {
                        param = entry.attributes.entryParameters(cacheTimeout: cacheTimeout)
                    }
                    return fuse_add_direntry_plus(request, start + used, remaining, name, &param, off_t(next))
                }
                var value = entry.attributes.statValue
                return fuse_add_direntry(request, start + used, remaining, name, &value, off_t(next))
            }
        }
        if needed > remaining { return false }
        self.used += needed
        if plus && !isDots { handedOut.append(entry.attributes.ino) }
        return true
    }

    /// The packed entries.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<used])) }
    }
}
