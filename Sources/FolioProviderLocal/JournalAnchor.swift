import FolioCore

/// The local provider's ``SyncAnchor``: `journal:<remote id>:<generation>:<sequence>:<offset>`, a position in
/// a container's ``ChangeJournal`` on one remote. An anchor of another remote, or one that does not parse, is
/// expired.
struct JournalAnchor: Equatable, Sendable {
    /// A position in one journal.
    struct Position: Equatable, Sendable {
        /// The journal's generation.
        var generation: String
        /// The last record seen.
        var sequence: UInt64
        /// The byte offset after it (a hint).
        var offset: Int64
    }

    /// The remote's identity.
    var remoteID: String
    /// The position.
    var position: Position

    /// An anchor of the remote `remoteID`.
    init(remoteID: String, position: Position) {
        self.remoteID = remoteID
        self.position = position
    }

    /// Parses an anchor; `nil` if it is not one of ours.
    init?(_ anchor: SyncAnchor) {
        let parts = anchor.rawValue.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "journal", !parts[1].isEmpty, !parts[2].isEmpty,
            let sequence = UInt64(parts[3]), let offset = Int64(parts[4]), offset >= 0
        else { return nil }
        remoteID = String(parts[1])
        position = Position(generation: String(parts[2]), sequence: sequence, offset: offset)
    }

    /// The anchor handed out.
    var anchor: SyncAnchor {
        SyncAnchor("journal:\(remoteID):\(position.generation):\(position.sequence):\(position.offset)")
    }
}
