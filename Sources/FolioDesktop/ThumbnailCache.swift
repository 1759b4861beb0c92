import CGIO
import FolioCore
import Foundation

/// The desktop's shared thumbnail cache, as the Thumbnail Managing Standard lays it out: `<root>/normal/` and
/// `<root>/large/` hold `<MD5 of the file's URI>.png`, each carrying its source's URI and modification time
/// (`Thumb::URI`, `Thumb::MTime`), and `<root>/fail/gnome-thumbnail-factory/` records the files a thumbnailer
/// failed on, so that GNOME's programs do not try them again (and download them to try). Files are written
/// whole under a temporary name and renamed into place, mode 0600 in folders of mode 0700, as the standard asks.
/// Modification times are written as the desktop's thumbnailer reads them (``TimeStyle``).
public struct ThumbnailCache: Sendable {
    /// The cache's folder (`$XDG_CACHE_HOME/thumbnails`).
    public let root: String
    /// How `Thumb::MTime` is written.
    public let timeStyle: TimeStyle

    /// How the desktop's readers of the cache compare `Thumb::MTime` with a file's time. They disagree, and one
    /// value cannot please both for a time with a fraction of a second (nearly every file's).
    public enum TimeStyle: Sendable {
        /// Whole seconds, as the standard says: GNOME's thumbnail factory, GLib 2.74 (`thumbnail::is-valid`, which
        /// refuses anything else), KDE.
        case seconds
        /// Seconds and microseconds after a point (`1795783094.971179`), as tumbler 4.18 (Thunar's thumbnailer)
        /// writes and checks it: it takes whole seconds for out of date and makes its own.
        case microseconds
    }

    /// The cache in `root`, its times written in `timeStyle`.
    public init(root: String, timeStyle: TimeStyle = .seconds) {
        self.root = root
        self.timeStyle = timeStyle
    }

    /// The cache of the user this process runs as: `$XDG_CACHE_HOME/thumbnails`, or `~/.cache/thumbnails`.
    public static func ofCurrentUser(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> ThumbnailCache?
    {
        // Xfce's thumbnailer reads the times one way, everyone else's the other.
        let desktops = (environment["XDG_CURRENT_DESKTOP"] ?? "").uppercased().split(separator: ":")
        let style: TimeStyle = desktops.contains("XFCE") ? .microseconds : .seconds
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return ThumbnailCache(root: cache + "/thumbnails", timeStyle: style)
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return ThumbnailCache(root: home + "/.cache/thumbnails", timeStyle: style)
    }

    /// The `file://` URI of an absolute path, escaped as GLib escapes it (the URI whose MD5 names the thumbnail).
    public static func uri(ofPath path: String) -> String? {
        guard let uri = g_filename_to_uri(path, nil, nil) else { return nil }
        defer { g_free(uri) }
        return String(cString: uri)
    }

    /// The MD5 of `uri`, in lowercase hex: the thumbnail's file name without `.png`.
    public static func hash(ofURI uri: String) -> String {
        guard let digest = g_compute_checksum_for_string(G_CHECKSUM_MD5, uri, -1) else { return "" }
        defer { g_free(digest) }
        return String(cString: digest)
    }

    /// Where the thumbnail of `size` of `uri` is.
    public func path(of uri: String, size: ThumbnailSize) -> String {
        "\(root)/\(size.rawValue)/\(Self.hash(ofURI: uri)).png"
    }

    /// Where the record of a failed thumbnail of `uri` is (GNOME's thumbnail factory's folder).
    public func failurePath(of uri: String) -> String {
        "\(root)/fail/\(Self.failureFolder)/\(Self.hash(ofURI: uri)).png"
    }

    /// The folder of `fail/` GNOME's thumbnail factory (Nautilus, the GTK file chooser) reads.
    public static let failureFolder = "gnome-thumbnail-factory"

    /// Writes the thumbnail of `size` of `uri`, whose source was last modified at `modificationTime` (seconds):
    /// `png` with the standard's keys set. Removes a failure record of `uri` (its thumbnail exists now).
    public func write(_ png: [UInt8], of uri: String, size: ThumbnailSize, modificationTime: Timestamp) throws(FolioError) {
        let texts = [
            ("Thumb::URI", uri), ("Thumb::MTime", text(of: modificationTime)), ("Software", "Folio"),
        ]
        guard let tagged = PNGText.setting(texts.map { (key: $0.0, value: $0.1) }, in: png) else {
            throw .invalidArgument("the thumbnail of \(uri) is not a PNG file")
        }
        try place(tagged, at: path(of: uri, size: size))
        unlink(failurePath(of: uri))
    }

    /// Records that no thumbnail can be made of `uri` at `modificationTime` (a 1×1 image with the standard's
    /// keys, as GNOME writes it).
    public func writeFailure(of uri: String, modificationTime: Timestamp) throws(FolioError) {
        let pixel = PNGEncoder.encode(width: 1, height: 1) { _, _ in (0, 0, 0) }
        let texts = [("Thumb::URI", uri), ("Thumb::MTime", text(of: modificationTime)), ("Software", "Folio")]
        guard let tagged = PNGText.setting(texts.map { (key: $0.0, value: $0.1) }, in: pixel) else { return }
        try place(tagged, at: failurePath(of: uri))
    }

    /// Removes every thumbnail and failure record of `uri`.
    public func remove(_ uri: String) {
        for size in ThumbnailSize.allCases { unlink(path(of: uri, size: size)) }
        unlink(failurePath(of: uri))
    }

    /// The `Thumb::MTime` of the thumbnail of `size` of `uri` as written, if one is there and is about `uri`.
    public func modificationTime(of uri: String, size: ThumbnailSize) -> String? {
        guard let data = FileManager.default.contents(atPath: path(of: uri, size: size)),
            let texts = PNGText.texts(of: [UInt8](data)), texts["Thumb::URI"] == uri
        else { return nil }
        return texts["Thumb::MTime"]
    }

    /// `Thumb::MTime` for a time, in ``timeStyle``.
    public func text(of time: Timestamp) -> String {
        let microseconds = time.nanoseconds / 1000
        guard timeStyle == .microseconds, microseconds > 0 else { return String(time.seconds) }
        let fraction = String(microseconds)
        return "\(time.seconds)." + String(repeating: "0", count: max(0, 6 - fraction.count)) + fraction
    }

    /// Writes `bytes` at `path` under a temporary name first, then renames it into place.
    private func place(_ bytes: [UInt8], at path: String) throws(FolioError) {
        let folder = (path as NSString).deletingLastPathComponent
        try makeFolders(folder)
        let temporary = "\(folder)/.folio-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).png"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .io("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .io("cannot write \(path): \(reason)")
        }
    }

    /// Makes `folder` and the folders above it up to the cache's root, mode 0700.
    private func makeFolders(_ folder: String) throws(FolioError) {
        var missing: [String] = []
        var current = folder
        while access(current, F_OK) != 0, current.count > 1 {
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        for folder in missing.reversed() where mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw .io("cannot make \(folder): \(String(cString: strerror(errno)))")
        }
    }
}
