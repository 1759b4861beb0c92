import FolioCore

/// One line of a ``ChangeJournal``: an item changed (created, changed in content or metadata, renamed or moved
/// here: its place then) or left the container (deleted, or moved to another container). Only ids and places
/// are recorded; ``LocalProvider/changes(in:since:)`` reports an item's state as it is when it is asked.
struct JournalRecord: Codable, Equatable, Sendable {
    /// The record's position in the journal (1, 2, 3, … without gaps).
    var sequence: UInt64
    /// The item.
    var id: ItemID
    /// The item's parent folder when it changed (`nil`: the container's root, or a deletion).
    var parentID: ItemID?
    /// The item's name when it changed (`nil` for a deletion).
    var name: String?
    /// Whether the item left the container.
    var deleted: Bool

    /// A record of a change (the item's place) or of a departure.
    init(sequence: UInt64 = 0, id: ItemID, parentID: ItemID? = nil, name: String? = nil, deleted: Bool = false) {
        self.sequence = sequence
        self.id = id
        self.parentID = parentID
        self.name = name
        self.deleted = deleted
    }

    /// Short keys: a journal holds many records.
    private enum CodingKeys: String, CodingKey {
        case sequence = "s", id = "i", parentID = "p", name = "n", deleted = "x"
    }

    /// Decodes a record (a missing `x` is a change).
    init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        sequence = try values.decode(UInt64.self, forKey: .sequence)
        id = ItemID(try values.decode(String.self, forKey: .id))
        parentID = try values.decodeIfPresent(String.self, forKey: .parentID).map { ItemID($0) }
        name = try values.decodeIfPresent(String.self, forKey: .name)
        deleted = try values.decodeIfPresent(Bool.self, forKey: .deleted) ?? false
    }

    /// Encodes a record (only what it holds).
    func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(sequence, forKey: .sequence)
        try values.encode(id.rawValue, forKey: .id)
        try values.encodeIfPresent(parentID?.rawValue, forKey: .parentID)
        try values.encodeIfPresent(name, forKey: .name)
        if deleted { try values.encode(true, forKey: .deleted) }
    }
}
