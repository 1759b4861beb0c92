import Crypto
import FolioCore
import Foundation
import SystemPackage

/// What a bookmark says: the item, where it was when the bookmark was made (to find the document that took its
/// place after a replacing save), and the view it was made in.
struct BookmarkContent: Codable, Equatable, Sendable {
    /// The item's id.
    var item: String
    /// The id of the folder the item was in (`nil`: a container's root level).
    var folder: String?
    /// The item's name there.
    var name: String
    /// The view the bookmark was made in (``BookmarkSigner/viewKey(_:)``).
    var view: String
    /// The installation that signed it: a digest of its key, so a token from elsewhere is named as such.
    var installation: String

    private enum CodingKeys: String, CodingKey {
        case item = "i", folder = "f", name = "n", view = "v", installation = "k"
    }
}

/// Makes and checks bookmarks (DESIGN.md §2 "References, bookmarks, grants"): opaque tokens that carry an item
/// id, signed with HMAC-SHA256 under a key of this installation (32 random bytes in the state folder's
/// `bookmark.key`, mode 0600, made at the first mount). A token whose bytes changed, or that another installation
/// signed, is refused before anything in it is used.
///
/// A token is `fb1.<content>.<signature>`, both parts base64url. The content is readable (like the path inside
/// an NSURL bookmark): it names an item id and a file name, never a secret.
struct BookmarkSigner: Sendable {
    private let key: SymmetricKey
    /// The digest of the key that tokens carry (not secret: it names the installation).
    let installation: String

    /// The key file's name in the state folder.
    static let keyFile = "bookmark.key"
    private static let prefix = "fb1."

    init(key: SymmetricKey) {
        self.key = key
        let digest = SHA256.hash(data: key.withUnsafeBytes { Data($0) })
        installation = digest.prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The signer of the state folder `folder`: its key, made (0600) if there is none. A key file that is not a
    /// regular file of 32 bytes (a symlink someone put there, a truncated file) is refused, never used or replaced.
    static func load(stateFolder folder: FilePath) throws(FolioError) -> BookmarkSigner {
        let path = folder.appending(keyFile).string
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if created >= 0 {
            let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
            let written = bytes.withUnsafeBytes { write(created, $0.baseAddress, $0.count) }
            let synced = fsync(created) == 0
            close(created)
            guard written == bytes.count, synced else {
                unlink(path)
                throw .io("cannot write the bookmark key \(path)")
            }
        } else if errno != EEXIST {
            throw .system(.init(rawValue: errno), "create the bookmark key \(path)")
        }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .system(.init(rawValue: errno), "open the bookmark key \(path)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == 32 else {
            throw .invalidArgument("the bookmark key \(path) is not a 32-byte file: move it away to make a new one "
                + "(bookmarks made with it will no longer resolve)")
        }
        if info.st_mode & 0o077 != 0 { fchmod(fd, 0o600) }
        var bytes = [UInt8](repeating: 0, count: 32)
        guard read(fd, &bytes, 32) == 32 else { throw .io("cannot read the bookmark key \(path)") }
        return BookmarkSigner(key: SymmetricKey(data: bytes))
    }

    /// How a view is named inside tokens.
    static func viewKey(_ view: NamespaceView) -> String {
        switch view {
        case .full: return "full"
        case .app(let container): return "app:" + container.rawValue
        }
    }

    /// The signed token for `content`.
    func token(for content: BookmarkContent) -> String {
        var content = content
        content.installation = installation
        // (Sorted keys: one content, one token.)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let body = Self.prefix + Self.base64url(Data((try? encoder.encode(content)) ?? Data()))
        let signature = HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: key)
        return body + "." + Self.base64url(Data(signature))
    }

    /// The content of `token`, once its signature is checked.
    func content(of token: String) throws(FolioError) -> BookmarkContent {
        let trimmed = token.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard trimmed.hasPrefix(Self.prefix), parts.count == 3, let body = Self.data(base64url: parts[1]),
              let signature = Self.data(base64url: parts[2]) else {
            throw .invalidArgument("that is not a Folio bookmark (a token from `folio bookmark PATH`)")
        }
        let content = try? JSONDecoder().decode(BookmarkContent.self, from: body)
        let signed = Data("\(parts[0]).\(parts[1])".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key),
              let content else {
            if let content, content.installation != installation {
                throw .accessDenied(
                    "this bookmark was made by another Folio installation (another state folder or machine): refused")
            }
            throw .accessDenied("this bookmark's signature does not match (it was changed, or forged): refused")
        }
        return content
    }

    private static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func data(base64url text: Substring) -> Data? {
        guard !text.contains(where: { "+/=".contains($0) }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
