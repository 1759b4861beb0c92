import Foundation

/// Which names the provider can store. A name outside the policy is refused with a clear errno before
/// anything is created.
public struct NamePolicy: Sendable, Hashable {
    /// `name` with a note before its extension: `report.txt` and `2` give `report (2).txt`.
    public static func annotated(_ name: String, _ note: String) -> String {
        let stem = (name as NSString).deletingPathExtension
        let pathExtension = (name as NSString).pathExtension
        return "\(stem) (\(note))" + (pathExtension.isEmpty ? "" : ".\(pathExtension)")
    }

    /// Longest name in bytes (UTF-8).
    public var maximumLength: Int
    /// Prefixes reserved by the provider.
    public var reservedPrefixes: [String]
    /// Characters the provider cannot store (besides `/` and NUL, which no POSIX name has).
    public var forbiddenCharacters: Set<Character>

    /// Creates a policy.
    public init(maximumLength: Int = 255, reservedPrefixes: [String] = [".folio-"], forbiddenCharacters: Set<Character> = []) {
        self.maximumLength = maximumLength
        self.reservedPrefixes = reservedPrefixes
        self.forbiddenCharacters = forbiddenCharacters
    }

    /// Throws `.nameTooLong` or `.invalidArgument` for a name the provider cannot store.
    public func validate(_ name: String) throws(FolioError) {
        try validateLocal(name)
        for prefix in reservedPrefixes where name.hasPrefix(prefix) {
            throw .invalidArgument("names starting with \(prefix) are reserved by the provider")
        }
        if let bad = name.first(where: { forbiddenCharacters.contains($0) }) {
            throw .invalidArgument("the provider cannot store \"\(bad)\" in a name")
        }
    }

    /// Throws `.nameTooLong` or `.invalidArgument` for a name no item can have, even one that stays on this
    /// machine (a FIFO, socket or device node).
    public func validateLocal(_ name: String) throws(FolioError) {
        if name.isEmpty || name == "." || name == ".." || name.contains("/") || name.contains("\0") {
            throw .invalidArgument("invalid name \"\(name)\"")
        }
        try checkLength(name)
    }

    /// Throws `.nameTooLong` for a name longer than any item can have: looking it up, removing or renaming it
    /// is `ENAMETOOLONG`, not `ENOENT`.
    public func checkLength(_ name: String) throws(FolioError) {
        if name.utf8.count > maximumLength {
            throw .nameTooLong("\(name.utf8.count) bytes, the provider stores at most \(maximumLength)")
        }
    }
}
