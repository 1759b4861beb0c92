import FolioCore

extension ItemState {
    /// The state as the store's three columns: `state` (the state's ``ItemState/name``), `state_generation`
    /// (for `dirty` and `uploading`) and `state_reason` (for `failed`).
    var storeColumns: (name: String, generation: Int64?, reason: String?) {
        switch self {
        case .dirty(let generation), .uploading(let generation):
            return (name, Int64(bitPattern: generation), nil)
        case .failed(let reason):
            return (name, nil, reason)
        case .placeholder, .materializing, .materialized, .conflicted:
            return (name, nil, nil)
        }
    }

    /// Rebuilds a state from the store's columns; throws if they do not describe a state this build knows.
    init(storeName name: String, generation: Int64?, reason: String?) throws(FolioError) {
        switch name {
        case "placeholder": self = .placeholder
        case "materializing": self = .materializing
        case "materialized": self = .materialized
        case "conflicted": self = .conflicted
        case "dirty", "uploading":
            guard let generation else { throw .io("item state '\(name)' has no generation") }
            let value = UInt64(bitPattern: generation)
            self = name == "dirty" ? .dirty(generation: value) : .uploading(generation: value)
        case "failed":
            self = .failed(reason: reason ?? "")
        default:
            throw .io("unknown item state '\(name)'")
        }
    }
}
