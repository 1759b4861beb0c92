/// A 64-bit FNV-1a hash of text: the same in every process and on every machine, unlike Swift's `Hasher`
/// (for names derived from paths, and for values kept on disk). Not for anything an attacker chooses.
public enum StableHash {
    /// The FNV-1a hash of `text`'s UTF-8 bytes.
    public static func fnv1a(_ text: String) -> UInt64 {
        fnv1a(bytes: text.utf8)
    }

    /// The FNV-1a hash of `bytes`.
    public static func fnv1a(bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}
