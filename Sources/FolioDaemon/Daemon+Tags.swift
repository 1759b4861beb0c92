import FolioCore
import Foundation

extension Daemon {
    /// The commands of `folio tag`: `tag-list`, `tag-add` and `tag-remove` (the tags in ``ControlRequest/target``, a
    /// JSON array of strings).
    static let tagCommands: Set<String> = ["tag-list", "tag-add", "tag-remove"]

    /// Answers `folio tag` (`path` relative to the root of `view`): the item's tags, in ``ControlResponse/data`` as
    /// a JSON array and in ``ControlResponse/message`` one per line; `nil` for any other command. Every tag is
    /// checked before anything changes: a bad one changes nothing. The change is the same as `setfattr -n
    /// user.xdg.tags` on the mount: kept with the item, uploaded with its metadata, merged with other devices'.
    func handleTagCommand(
        _ request: ControlRequest, fileSystem: FolioFileSystem, view: NamespaceView
    ) -> ControlResponse? {
        guard Self.tagCommands.contains(request.command) else { return nil }
        guard let path = request.path else { return ControlResponse(ok: false, error: "folio tag needs a path") }
        let shown = path.isEmpty ? "/" : path
        do {
            var given: [String] = []
            if request.command != "tag-list" {
                guard let data = request.target?.data(using: .utf8),
                    let tags = try? JSONDecoder().decode([String].self, from: data), !tags.isEmpty
                else { throw FolioError.invalidArgument("folio tag \(request.command.dropFirst(4)) needs tags") }
                given = tags
            }
            let ino = try resolveListing(path, fileSystem: fileSystem, view: view)
            let tags: [String]
            switch request.command {
            case "tag-add": tags = try fileSystem.changeTags(ino, adding: given, removing: [])
            case "tag-remove": tags = try fileSystem.changeTags(ino, adding: [], removing: given)
            default: tags = try fileSystem.tags(of: ino)
            }
            var response = ControlResponse(ok: true)
            response.data = String(decoding: try JSONEncoder().encode(tags), as: UTF8.self)
            response.message = request.command == "tag-list"
                ? tags.joined(separator: "\n")
                : (tags.isEmpty ? "\(shown) has no tags" : "tags of \(shown): " + tags.joined(separator: ", "))
            return response
        } catch {
            if case .notFound = FolioError(error) {
                return ControlResponse(ok: false, error: "no such file or folder in the mount: \(shown)")
            }
            return ControlResponse(ok: false, error: "\(error)")
        }
    }
}
