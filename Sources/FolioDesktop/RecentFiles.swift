import CGIO
import FolioCore
import Foundation
import Logging
import Synchronization

/// Adds the documents opened or saved through the mount to the desktop's list of recent files,
/// `$XDG_DATA_HOME/recently-used.xbel` (the freedesktop Desktop Bookmark spec, the file GTK's recent manager and
/// so the file dialogs and file managers read), so they show among "Recent" there as documents used in other
/// programs do.
///
/// The file is read, changed and written by GLib's own implementation of the format (`GBookmarkFile`, as GTK
/// does): entries other programs put there are kept, an entry of a document already there gets its visit and
/// count updated, and the file is written whole under another name and renamed into place (`g_file_set_contents`),
/// so no reader sees half of it. Uses are gathered for a moment and written together. Another program writing
/// the file in the same instant may lose its last change or ours (GTK's own writers share that window).
public final class RecentFiles: UsageObserving, Sendable {
    private let fileSystem: FolioFileSystem
    private let logger: Logger
    /// The list's file.
    public let path: String
    private let mountpoint: String
    private let view: NamespaceView
    private let used = Mutex<[ItemID]>([])
    /// The last write failed for a reason that can clear (a folder missing, a full disk): tried again soon.
    private let retrying = Mutex(false)
    private let wake = WakeSignal()
    private let loop = Mutex<Task<Void, Never>?>(nil)

    /// How long uses are gathered before the file is written.
    static let gathering: Duration = .milliseconds(500)
    /// How soon a write that failed for a reason that can clear is tried again.
    static let retryInterval: Duration = .seconds(5)
    /// The most uses kept for a write that waits to be tried again.
    static let pendingLimit = 200
    /// The application name the entries carry.
    static let application = "Folio"

    /// The list of the desktop session this process runs in: `$XDG_DATA_HOME/recently-used.xbel` when the
    /// environment names a desktop session (`XDG_DATA_HOME`, `XDG_CURRENT_DESKTOP`, `DISPLAY` or
    /// `WAYLAND_DISPLAY`, with `XDG_DATA_HOME` defaulting to `~/.local/share`); `nil` otherwise.
    public static func sessionFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let session = ["XDG_DATA_HOME", "XDG_CURRENT_DESKTOP", "DISPLAY", "WAYLAND_DISPLAY"].contains {
            !(environment[$0] ?? "").isEmpty
        }
        guard session else { return nil }
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return data + "/recently-used.xbel"
    }

    /// A writer of `path` for the documents `view` shows at `mountpoint`.
    public init(fileSystem: FolioFileSystem, logger: Logger, path: String, mountpoint: String, view: NamespaceView) {
        self.fileSystem = fileSystem
        self.logger = logger
        self.path = path
        self.mountpoint = mountpoint.hasSuffix("/") ? String(mountpoint.dropLast()) : mountpoint
        self.view = view
    }

    public func documentUsed(_ item: ItemID) {
        used.withLock { $0.append(item) }
        wake.signal()
    }

    /// Starts the background loop.
    public func start() {
        let task = Task { [self] in
            while !Task.isCancelled {
                await wake.wait(upTo: retrying.withLock { $0 } ? Self.retryInterval : .seconds(60))
                guard !Task.isCancelled else { break }
                try? await Task.sleep(for: Self.gathering)
                write()
            }
        }
        loop.withLock { $0 = task }
    }

    /// Stops the loop, writing what was gathered.
    public func stop() {
        loop.withLock { $0?.cancel() }
        write()
    }

    /// Adds the documents used since the last write to the file.
    func write() {
        let items = used.withLock { items in
            defer { items.removeAll() }
            return items
        }
        var seen: Set<ItemID> = []
        var documents: [(uri: String, type: String)] = []
        for item in items where seen.insert(item).inserted {
            guard let relative = (try? fileSystem.locations(of: item, in: view))?.first,
                  let uri = Self.uri(of: mountpoint + "/" + relative) else { continue }
            let name = (relative as NSString).lastPathComponent
            let described = fileSystem.ino(of: item).flatMap { try? fileSystem.extendedAttribute($0, name: "user.folio.type") }
            let type = described.map { String(decoding: $0, as: UTF8.self) }
                ?? ContentTypes.typeOfName(name) ?? "application/octet-stream"
            documents.append((uri, type))
        }
        guard !documents.isEmpty else { return }
        do {
            try update(with: documents)
            retrying.withLock { $0 = false }
        } catch {
            logger.warning("cannot add \(documents.count) documents to \(path): \(error)")
            // A file that cannot be read needs the user (it is left alone); anything else can clear: the uses are
            // kept (the most recent ones, a bounded number) and written again in a moment.
            if case .invalidArgument = error as? FolioError { return }
            used.withLock { pending in
                pending = Array((items + pending).suffix(Self.pendingLimit))
            }
            retrying.withLock { $0 = true }
        }
    }

    /// Loads the file (if any), adds or updates the entries, and writes it back whole.
    private func update(with documents: [(uri: String, type: String)]) throws {
        let bookmarks = g_bookmark_file_new()
        defer { g_bookmark_file_free(bookmarks) }
        var error: UnsafeMutablePointer<GError>?
        if FileManager.default.fileExists(atPath: path), g_bookmark_file_load_from_file(bookmarks, path, &error) == 0 {
            // A file GLib cannot read is left alone: writing ours would drop what the others put there.
            let reason = error.map { String(cString: $0.pointee.message) } ?? "unreadable"
            g_clear_error(&error)
            throw FolioError.invalidArgument("\(path) cannot be read (\(reason)); it was left as it is")
        }
        for document in documents {
            g_bookmark_file_set_mime_type(bookmarks, document.uri, document.type)
            g_bookmark_file_add_application(bookmarks, document.uri, Self.application, "xdg-open %u")
        }
        trimOwnEntries(bookmarks)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard g_bookmark_file_to_file(bookmarks, path, &error) != 0 else {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "cannot write"
            g_clear_error(&error)
            throw FolioError.io("\(path): \(reason)")
        }
    }

    /// Keeps at most ``limit`` entries of this mount that only Folio registered (the most recently visited), so a
    /// `cp -r` or `grep -r` through the mount does not flood the list; entries another program registered too
    /// are never removed.
    private func trimOwnEntries(_ bookmarks: OpaquePointer?) {
        guard let prefix = Self.uri(of: mountpoint + "/") else { return }
        var count: gsize = 0
        guard let uris = g_bookmark_file_get_uris(bookmarks, &count) else { return }
        defer { g_strfreev(uris) }
        var own: [(uri: String, visited: Int64)] = []
        for index in 0..<Int(count) {
            guard let pointer = uris[index] else { continue }
            let uri = String(cString: pointer)
            guard uri.hasPrefix(prefix) else { continue }
            var applicationCount: gsize = 0
            let applications = g_bookmark_file_get_applications(bookmarks, uri, &applicationCount, nil)
            defer { g_strfreev(applications) }
            guard applicationCount == 1, let first = applications?[0],
                  String(cString: first) == Self.application else { continue }
            // (In microseconds: a burst of uses is written within one second.)
            let stamps = [
                g_bookmark_file_get_visited_date_time(bookmarks, uri, nil),
                g_bookmark_file_get_modified_date_time(bookmarks, uri, nil),
            ].compactMap { $0 }.map { Int64(g_date_time_to_unix($0)) * 1_000_000 + Int64(g_date_time_get_microsecond($0)) }
            own.append((uri, stamps.max() ?? 0))
        }
        guard own.count > Self.limit else { return }
        for entry in own.sorted(by: { $0.visited > $1.visited }).dropFirst(Self.limit) {
            g_bookmark_file_remove_item(bookmarks, entry.uri, nil)
        }
    }

    /// How many entries of this mount only Folio registered the list keeps (as many as `.Recents/` shows).
    static let limit = VirtualFolder.recentsLimit

    /// The `file://` URI of a path, as GLib writes it.
    static func uri(of path: String) -> String? {
        guard let uri = g_filename_to_uri(path, nil, nil) else { return nil }
        defer { g_free(uri) }
        return String(cString: uri)
    }
}
