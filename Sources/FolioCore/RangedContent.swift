/// One version of a placeholder being downloaded by ranges, as an open handle reads it: the version file is
/// filled in place, and a read waits only for the bytes it needs (fetched first if nobody fetches them yet).
/// Made by a ``RangedMaterializing`` materializer; the handle that holds it tells it when it closes.
///
/// Lock order: the core never calls into a download while it holds its own lock, and a download never calls into
/// the core while it holds its own: the two locks are never nested.
public protocol RangedContent: AnyObject, Sendable {
    /// The version file being filled (in the content cache).
    var fileName: String { get }
    /// The provider version whose bytes the file receives: only this version's bytes are ever written to it.
    var version: String { get }
    /// The version's size.
    var size: Int64 { get }
    /// Whether every byte of `range` is in the file (a question, not a read: it fetches nothing).
    func contains(_ range: Range<Int64>) -> Bool
    /// A read of `range` through a handle: whether every byte of it is in the file. A read that continues the
    /// last ones fetches ahead of itself (and makes the reader sequential: the rest comes in the background);
    /// opening fetches nothing.
    func read(_ range: Range<Int64>) -> Bool
    /// Waits until every byte of `range` is in the file, fetching what nobody fetches yet first. A failed fetch
    /// fails the wait (`.io` for a version the provider no longer has, `.offline`, ...) and is tried again by the
    /// next read; cancelling the task stops waiting (`.interrupted`).
    func waitUntilPresent(_ range: Range<Int64>) async throws(FolioError)
    /// The handle that read through this download closed.
    func handleClosed()
    /// A process reading through this download was killed by a signal while it had it open (Ctrl-C): once the
    /// last open closes, nobody wants the rest.
    func readerInterrupted()
}

/// A materializer that can also give reads the content of a placeholder as it arrives.
public protocol RangedMaterializing: ContentMaterializing {
    /// The download of `ino`'s current version, joined or started, without waiting for its content, counted as
    /// one open handle until ``RangedContent/handleClosed()``; `nil` when the content is local (open it as usual).
    func openRanged(_ ino: UInt64) async throws(FolioError) -> (any RangedContent)?
}
