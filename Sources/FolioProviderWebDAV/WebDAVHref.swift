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
        let path: String
        if let url = URL(string: href), let scheme = url.scheme {
            guard scheme == base.scheme, url.host == base.host, url.port == base.port else {
                throw FolioError.providerFailure(
                    "the server named \(href.prefix(200)) in a listing of \(base.path): another server",
                    retryable: false)
            }
            path = url.path(percentEncoded: true)
        } else {
            path = href
        }
        let basePath = base.path(percentEncoded: true)
        let normalizedBase = basePath.hasSuffix("/") ? basePath : basePath + "/"
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        // Compared decoded: servers encode differently (`%20` or a space, upper- or lowercase hex).
        if let segments = Self.segments(trimmed + "/"), segments == Self.segments(normalizedBase) {
            self = .collection
            return
        }
        guard let encodedName = Self.member(of: normalizedBase, path: trimmed) else {
            throw FolioError.providerFailure(
                "the server named \(href.prefix(200)) in a listing of \(basePath): not one of its members",
                retryable: false)
        }
        guard let name = encodedName.removingPercentEncoding, !name.isEmpty, name != ".", name != "..",
            !name.contains("/"), !name.contains("\0")
        else {
            throw FolioError.providerFailure(
                "the server named a member \(encodedName.prefix(200)) of \(basePath) that cannot be a name",
                retryable: false)
        }
        self = .member(name)
    }

    /// The encoded last component of `path` if `path` is one level below `base` (compared decoded, since servers
    /// encode differently: `%20` or a space, upper- or lowercase hex).
    private static func member(of base: String, path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let name = String(path[path.index(after: slash)...])
        guard !name.isEmpty, let parent = segments(String(path[...slash])), parent == segments(base) else {
            return nil
        }
        return name
    }

    /// What names one resource, whatever the encoding of `href` (a full URL or an absolute path; `%20` or a
    /// space; a trailing `/` or not): its path's decoded segments. `nil` for an `href` that does not decode.
    static func resource(_ href: String) -> [String]? {
        var path = href
        if let url = URL(string: href), url.scheme != nil { path = url.path(percentEncoded: true) }
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return segments(path)
    }

    /// The decoded segments of the encoded path `path`, split at its literal `/`s only: an encoded slash (`%2F`)
    /// stays inside its segment, so `/a%2Fb/` is never taken for `/a/b/`. `nil` if a segment does not decode.
    private static func segments(_ path: String) -> [String]? {
        var decoded: [String] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard let text = segment.removingPercentEncoding else { return nil }
            decoded.append(text)
        }
        return decoded
    }
}
