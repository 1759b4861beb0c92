import Foundation
import FolioCore

/// The rules for names the local provider can store.
enum ItemName {
    /// The longest name, in UTF-8 bytes, that Linux filesystems store.
    static let maximumByteCount = 255

    /// The prefix of the provider's own files (temporary files, the manifest); never a user item.
    static let internalPrefix = ".folio-"

    /// Throws `.nameTooLong` or `.invalidArgument` if `name` cannot be stored as an item name.
    static func validate(_ name: String) throws {
        if name.isEmpty || name == "." || name == ".." {
            throw FolioError.invalidArgument("name \"\(name)\" is reserved")
        }
        if name.utf8.contains(UInt8(ascii: "/")) || name.utf8.contains(0) {
            throw FolioError.invalidArgument("name \"\(printable(name))\" contains '/' or NUL")
        }
        if name.utf8.count > maximumByteCount {
            throw FolioError.nameTooLong("name of \(name.utf8.count) bytes (at most \(maximumByteCount))")
        }
        if isInternal(name) {
            throw FolioError.invalidArgument("name \"\(name)\" starts with \(internalPrefix), kept for the provider")
        }
    }

    /// Whether a name found on disk belongs to the provider (skipped by enumeration).
    static func isInternal(_ name: String) -> Bool { name.hasPrefix(internalPrefix) }

    /// Throws `.invalidArgument` if `id` cannot name a container's top-level directory.
    static func validateContainerID(_ id: ContainerID) throws {
        try validate(id.rawValue)
        if id.rawValue.hasPrefix(".") {
            throw FolioError.invalidArgument(
                "container id \"\(id)\" starts with '.' (hidden entries are not containers)"
            )
        }
    }

    /// The name with NUL shown as `\0`, for messages.
    private static func printable(_ name: String) -> String {
        name.replacingOccurrences(of: "\u{0}", with: "\\0")
    }
}
