import FolioProviderWebDAV
import Foundation

/// What a WebDAV server really does with what the provider relies on, measured by real requests under `/probe/`
/// of a fresh server (see ``init(probing:)``): each server's test compares it with the facts written in that
/// server type's doc comment, so a server that changes (a new package version) fails its test.
struct WebDAVServerFacts: Equatable, CustomStringConvertible {
    /// How an entity tag is written.
    enum ETag: String, Equatable {
        /// `"…"`.
        case strong
        /// `W/"…"`.
        case weak
        /// Neither quoted nor weak (not RFC 9110 syntax).
        case unquoted
        /// None sent.
        case absent

        init(_ tag: String?) {
            guard let tag else { self = .absent; return }
            if tag.hasPrefix("W/\"") {
                self = .weak
            } else if tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count >= 2 {
                self = .strong
            } else {
                self = .unquoted
            }
        }
    }

    /// `getetag` of a file in a PROPFIND reply (the file last changed more than a second before).
    var fileETag: ETag
    /// The `ETag` header of a `PUT` reply that created a file.
    var putReplyETag: ETag
    /// The `ETag` header of a `GET` reply (of a file last changed more than a second before): what `If-Range`
    /// needs to resume a download.
    var getReplyETag: ETag
    /// `getetag` of a collection.
    var folderETag: ETag
    /// `getlastmodified` on files and collections alike.
    var lastModified: Bool
    /// A collection's `getetag` changes when a file two levels below it changes (what Nextcloud calls ETag
    /// propagation: one PROPFIND of a container's root tells whether anything below changed).
    var folderETagPropagates: Bool
    /// A collection reports a non-empty CalendarServer `getctag`.
    var ctag: Bool
    /// The status of a `sync-collection` REPORT (RFC 6578) with an empty token (207: supported).
    var syncCollectionStatus: Int
    /// A `PUT` with `If-Match:` the ETag the listing gave (quoted when the server sent it unquoted) succeeds.
    var ifMatchWithListedETagSucceeds: Bool
    /// A `PUT` with a wrong `If-Match` gets 412 and changes nothing.
    var ifMatchHonoured: Bool
    /// A `PUT` with `If-None-Match: *` on an existing file gets 412 and changes nothing.
    var ifNoneMatchHonoured: Bool
    /// A `DELETE` with a wrong `If-Match` gets 412 and deletes nothing.
    var deleteIfMatchHonoured: Bool
    /// A `MOVE` onto an existing file with `Overwrite: F` gets 412 and replaces nothing.
    var moveOverwriteFalseHonoured: Bool
    /// A `PROPPATCH` of a property in a custom namespace is answered 207 and the value read back by PROPFIND.
    var deadPropertiesKept: Bool
    /// The dead property is still there after a `MOVE` (false when dead properties are not kept at all).
    var moveKeepsDeadProperties: Bool

    var description: String {
        """
        fileETag \(fileETag), putReplyETag \(putReplyETag), getReplyETag \(getReplyETag), \
        folderETag \(folderETag), lastModified \(lastModified), \
        folderETagPropagates \(folderETagPropagates), ctag \(ctag), syncCollection \(syncCollectionStatus), \
        ifMatchWithListedETagSucceeds \(ifMatchWithListedETagSucceeds), ifMatch \(ifMatchHonoured), \
        ifNoneMatch \(ifNoneMatchHonoured), deleteIfMatch \(deleteIfMatchHonoured), \
        moveOverwriteF \(moveOverwriteFalseHonoured), deadProperties \(deadPropertiesKept), \
        moveKeepsDeadProperties \(moveKeepsDeadProperties)
        """
    }
}
