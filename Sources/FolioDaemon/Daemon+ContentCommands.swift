import FolioCore
import FolioDesktop
import Foundation

extension Daemon {
    /// Answers `pin`, `unpin`, `evict`, `download`, `versions`, `resolve` and `thumbnail` (the path is relative to
    /// the root of `view`); `nil` for any other command.
    func handleContentCommand(
        _ request: ControlRequest, fileSystem: FolioFileSystem, describer: Describer?, view: NamespaceView
    ) -> ControlResponse? {
        let commands = ["pin", "unpin", "evict", "download", "versions", "resolve", "thumbnail"]
        guard commands.contains(request.command) else { return nil }
        guard let path = request.path else {
            return ControlResponse(ok: false, error: "\(request.command) needs a path")
        }
        var response = ControlResponse(ok: true)
        do {
            // (Folders on the way that were never listed are listed.)
            let ino = try resolveListing(path, fileSystem: fileSystem, view: view)
            let shown = path.isEmpty ? "/" : path
            switch request.command {
            case "pin", "unpin":
                let pinned = request.command == "pin"
                let changed = try fileSystem.setPinned(ino, pinned)
                response.message = pinned
                    ? "pinned \(shown) (\(Wording.count(changed, "item"))); placeholders in it are being downloaded"
                    : "unpinned \(shown) (\(Wording.count(changed, "item")))"
            case "versions":
                response.versions = try fileSystem.versions(of: ino)
            case "thumbnail":
                guard let describer else { throw FolioError.notSupported("this mount keeps no thumbnails") }
                guard let size = ThumbnailSize(rawValue: request.target ?? ThumbnailSize.normal.rawValue) else {
                    throw FolioError.invalidArgument("thumbnail sizes are normal (128 pixels) and large (256)")
                }
                let png = try blockOn { () async -> Result<[UInt8], FolioError> in
                    do throws(FolioError) {
                        return .success(try await describer.thumbnail(of: ino, size: size))
                    } catch {
                        return .failure(error)
                    }
                }.get()
                response.data = Data(png).base64EncodedString()
            case "resolve":
                guard let keep = request.target.flatMap(ConflictResolution.init(rawValue:)) else {
                    throw FolioError.invalidArgument("resolve needs --keep local, remote or both")
                }
                try fileSystem.resolveConflict(ino, keep: keep)
                let kept = keep == .both ? "both versions" : "the \(keep.rawValue) version"
                response.message = "resolved \(shown): kept \(kept)"
            case "evict":
                let report = try fileSystem.evict(ino)
                var message = "evicted \(Wording.count(report.evicted, "file")) "
                    + "(\(Wording.count(Int(report.freedBytes), "byte"))) in \(shown)"
                if !report.skipped.isEmpty {
                    message += "; kept \(report.skipped.count): " + report.skipped.prefix(10).joined(separator: ", ")
                }
                response.message = message
            default:
                let result = try blockOn { () async -> Result<(files: Int, bytes: Int64), FolioError> in
                    do throws(FolioError) {
                        return .success(try await fileSystem.download(ino))
                    } catch {
                        return .failure(error)
                    }
                }.get()
                response.message = "downloaded \(Wording.count(result.files, "file")) "
                    + "(\(Wording.count(Int(result.bytes), "byte"))) in \(shown)"
            }
        } catch {
            return ControlResponse(ok: false, error: "\(error)")
        }
        return response
    }

}
