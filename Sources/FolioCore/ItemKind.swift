/// What kind of filesystem object an item is.
public enum ItemKind: String, Sendable, Codable, Hashable {
    case file
    case directory
    case symlink
    /// A named pipe: local only, never uploaded.
    case fifo
    /// A Unix socket: local only, never uploaded.
    case socket

    /// FIFOs and sockets exist only on this machine.
    public var isLocalOnly: Bool { self == .fifo || self == .socket }

    /// The `S_IF*` bits of this kind.
    public var typeBits: UInt32 {
        switch self {
        case .file: return 0o100000
        case .directory: return 0o040000
        case .symlink: return 0o120000
        case .fifo: return 0o010000
        case .socket: return 0o140000
        }
    }
}
