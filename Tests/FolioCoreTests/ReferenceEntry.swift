/// What the model expects at a path of this device's tree.
enum ReferenceEntry: Hashable, CustomStringConvertible {
    /// A folder.
    case directory
    /// A file with this content.
    case file(String)
    /// Anything else (never made by a sequence).
    case other(String)

    var description: String {
        switch self {
        case .directory: "folder"
        case .file(let content): "file \(ReferenceWorld.tag(content))"
        case .other(let kind): kind
        }
    }
}
