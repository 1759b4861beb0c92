import FolioCore
import Foundation

/// An `href` of a multistatus response, understood against the collection that was listed: the collection itself,
/// or one of its members by name. A server's answer is not trusted: an `href` on another host, outside the
/// collection, more than one level below it, or whose name decodes to `.`, `..`, something with a `/` or a NUL
/// in it, or nothing, is a clear error, never a path Folio would follow.
public enum WebDAVHref: Sendable, Equatable {
    /// The listed collection itself.
    case collection
    /// A member of the collection, by its decoded name.
    case member(String)

    /// Understands `href` from the listing of the collection at `base` (a URL whose path ends with `/`).
    public init(_ href: String, listing base: URL) throws(FolioError) {
        self = try Listing(base).href(href)
    }

    /// The collection a listing is of, decoded once for all the `href`s of its responses (a listing of 10,000
    /// members has 10,000 of them).
    public struct Listing: Sendable {
        private let base: URL
        private let basePath: String
        /// The decoded segments of the collection's path (with an empty last one: it ends with `/`).
        private let baseSegments: [String]?

        /// The listing of the collection at `base` (a URL whose path ends with `/`).
        public init(_ base: URL) {
            self.base = base
            let path = base.path(percentEncoded: true)
            basePath = path
            baseSegments = WebDAVHref.segments(path.hasSuffix("/") ? path : path + "/")
        }

        /// Understands `href`, one of the listing's.
        public func href(_ href: String) throws(FolioError) -> WebDAVHref {
            // Most servers write the collection's path as it was asked for: then the rest is the member's encoded
            // name (one trailing `/` for a folder), decoded alone, and the path is not split and decoded whole.
            if let quick = try sameSpelling(href) { return quick }
            let path: String
            if href.hasPrefix("/") {
                path = href  // an absolute path, as most servers send: no URL to parse
            } else if let url = URL(string: href), let scheme = url.scheme {
                guard scheme == base.scheme, url.host == base.host, url.port == base.port else {
                    throw FolioError.providerFailure(
                        "the server named \(href.prefix(200)) in a listing of \(base.path): another server",
                        retryable: false)
                }
                path = url.path(percentEncoded: true)
            } else {
                path = href
            }
            let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
            // Compared decoded: servers encode differently (`%20` or a space, upper- or lowercase hex).
            if let segments = WebDAVHref.segments(trimmed + "/"), segments == baseSegments {
                return .collection
            }
            guard let encodedName = member(trimmed) else {
                throw FolioError.providerFailure(
                    "the server named \(href.prefix(200)) in a listing of \(basePath): not one of its members",
                    retryable: false)
            }
            return try member(named: encodedName)
        }

        /// `href` understood by its bytes, if it begins with the collection's path spelled as it was asked for and
        /// the rest has no `/` but one at its end; `nil` otherwise (the general reading then decides). What this
        /// accepts, the general reading accepts the same way: the same prefix decodes to the same segments.
        private func sameSpelling(_ href: String) throws(FolioError) -> WebDAVHref? {
            guard href.utf8.starts(with: basePath.utf8), basePath.utf8.last == UInt8(ascii: "/") else { return nil }
            var rest = href.utf8.dropFirst(basePath.utf8.count)
            if rest.isEmpty { return .collection }
            if rest.last == UInt8(ascii: "/") { rest = rest.dropLast() }
            guard !rest.isEmpty, !rest.contains(UInt8(ascii: "/")) else { return nil }
            let encodedName = Substring(rest)
            return try member(named: encodedName)
        }

        /// The member whose encoded name is `encodedName`, if that decodes to a name (not empty, `.` or `..`, and
        /// without a `/` or a NUL).
        private func member(named encodedName: Substring) throws(FolioError) -> WebDAVHref {
            guard let name = WebDAVHref.percentDecoded(encodedName), !name.isEmpty, name != ".", name != "..",
                !name.utf8.contains(UInt8(ascii: "/")), !name.utf8.contains(0)
            else {
                throw FolioError.providerFailure(
                    "the server named a member \(encodedName.prefix(200)) of \(basePath) that cannot be a name",
                    retryable: false)
            }
            return .member(name)
        }

        /// The encoded last component of `path` if `path` is one level below the collection (compared decoded,
        /// since servers encode differently: `%20` or a space, upper- or lowercase hex).
        private func member(_ path: String) -> Substring? {
            guard let slash = path.lastIndex(of: "/") else { return nil }
            let name = path[path.index(after: slash)...]
            guard !name.isEmpty, let parent = WebDAVHref.segments(path[...slash]), parent == baseSegments else {
                return nil
            }
            return name
        }
    }

    /// What names one resource, whatever the encoding of `href` (a full URL or an absolute path; `%20` or a
    /// space; a trailing `/` or not): its path's decoded segments. `nil` for an `href` that does not decode.
    static func resource(_ href: String) -> [String]? {
        var path = href
        if !href.hasPrefix("/"), let url = URL(string: href), url.scheme != nil { path = url.path(percentEncoded: true) }
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return segments(path)
    }

    /// A key equal for two `href`s exactly when ``resource(_:)`` gives both the same segments (a listing checks
    /// that no resource is named twice): an absolute path without a `%` is its own key, trailing `/`s aside, and is
    /// not split; other `href`s join their decoded segments with `/` (or, if one holds a decoded `/`, with a NUL
    /// after a leading NUL, which no path written in XML holds). `nil` for an `href` that does not decode.
    static func resourceKey(_ href: String) -> String? {
        if href.utf8.first == UInt8(ascii: "/"), !href.utf8.contains(UInt8(ascii: "%")) {
            var path = Substring(href)
            while path.utf8.count > 1 && path.utf8.last == UInt8(ascii: "/") { path.removeLast() }
            return String(path)
        }
        guard let segments = resource(href) else { return nil }
        if segments.contains(where: { $0.utf8.contains(UInt8(ascii: "/")) }) {
            return "\u{0}" + segments.joined(separator: "\u{0}")
        }
        return segments.joined(separator: "/")
    }

    /// The decoded segments of the encoded path `path`, split at its literal `/`s only: an encoded slash (`%2F`)
    /// stays inside its segment, so `/a%2Fb/` is never taken for `/a/b/`. `nil` if a segment does not decode.
    private static func segments<Text: StringProtocol>(_ path: Text) -> [String]? {
        var decoded: [String] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard let text = percentDecoded(segment) else { return nil }
            decoded.append(text)
        }
        return decoded
    }

    /// `text` with its `%XX` escapes decoded (as `removingPercentEncoding` does, on the bytes, without bridging to
    /// `NSString`): `nil` for a `%` not followed by two hex digits, or bytes that are not UTF-8.
    static func percentDecoded<Text: StringProtocol>(_ text: Text) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
