/// What kind of filesystem object an item is.
public enum ItemKind: String, Sendable, Codable, Hashable {
    case file
    case directory
    case symlink
    /// A named pipe: local only, never uploaded.
    case fifo
    /// A Unix socket: local only, never uploaded.
    case socket
    /// A character device node: local only, never uploaded.
    case characterDevice
    /// A block device node: local only, never uploaded.
    case blockDevice

    /// FIFOs, sockets and device nodes exist only on this machine.
    public var isLocalOnly: Bool {
        switch self {
        case .fifo, .socket, .characterDevice, .blockDevice: return true
        case .file, .directory, .symlink: return false
        }
    }

    /// Whether items of this kind carry a device number (`st_rdev`).
    public var isDevice: Bool { self == .characterDevice || self == .blockDevice }

    /// The `S_IF*` bits of this kind.
    public var typeBits: UInt32 {
        switch self {
        case .file: return 0o100000
        case .directory: return 0o040000
        case .symlink: return 0o120000
        case .fifo: return 0o010000
        case .socket: return 0o140000
        case .characterDevice: return 0o020000
        case .blockDevice: return 0o060000
        }
    }
}
