/// Recognizes the saves of editors that move a document away from its name, or remove it, and then write a new
/// file under that name (vim's and Emacs's backup by rename, an unlink and a create), so that the new file takes
/// over the document's identity (DESIGN.md §2 "Coordination"). A value: it records which document left which
/// name, answers what a new file at a name takes over, and says which uploads wait; it does no I/O and reads no
/// clock (every call is given the time).
///
/// A document *leaves* a name when a process renames it away or removes it. If the same process puts a file at
/// that name (creates one, or renames one there) within ``window``, the new file takes over the document:
/// ``arrival(at:processID:now:)`` returns the departure. Until then the departed item's upload (its rename or its
/// delete) is *held*, and so is anything another process puts at the name meanwhile (its create must not reach
/// the provider before the departed item left the name there). The backup a takeover leaves behind (the renamed
/// file, now a new item) is held for a window too, so an editor that deletes it right after the save (vim) sends
/// nothing at all. Only the most recent ``capacity`` departures and backups are remembered: a save concerns one
/// document, and `rm -r` of a large tree must not hold thousands of deletes.
struct SaveTracker: Sendable {
    /// A point in time: nanoseconds of a monotonic clock (a plain integer keeps ``State`` loadable; the
    /// standard library's clock types are resilient).
    typealias Moment = UInt64

    /// A document that left a name, and what it carried then (its node may be gone, or have taken another
    /// identity, by the time a new file arrives).
    struct Departure: Hashable, Sendable {
        /// The document's item.
        var itemID: ItemID
        /// The process that moved or removed it.
        var processID: Int32
        /// When the window for a new file at its name ends.
        var deadline: Moment
        /// Its `user.*` attributes.
        var xattrs: [String: [UInt8]]
        /// Whether it was pinned.
        var pinned: Bool
        /// The references (grants) that opened it.
        var references: [ExternalReference.Location]
    }

    /// How long after a document left its name a new file there takes it over, in nanoseconds.
    let window: UInt64
    /// The most departures, and the most backups, remembered at once.
    let capacity: Int
    private var departures: [ExternalReference.Location: Departure] = [:]
    /// Items whose uploads wait, with the end of their wait.
    private var holds: [ItemID: Moment] = [:]
    /// Backups held after a takeover (a subset of `holds`), with the end of their wait.
    private var backups: [ItemID: Moment] = [:]

    /// Creates an empty tracker.
    init(window: Duration = .seconds(3), capacity: Int = 64) {
        let (seconds, attoseconds) = window.components
        self.window = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        self.capacity = max(1, capacity)
    }

    /// Whether nothing is remembered.
    var isEmpty: Bool { departures.isEmpty && holds.isEmpty }

    /// The document `departure` describes (its deadline aside) left `location` at `now`; returns when its window
    /// ends. A departure by no process (`processID` 0: the daemon itself, the kernel) is not recorded: `nil`.
    mutating func recordDeparture(
        _ departure: Departure, from location: ExternalReference.Location, now: Moment
    ) -> Moment? {
        guard departure.processID != 0 else { return nil }
        expire(now: now)
        var departure = departure
        departure.deadline = now &+ window
        if departures[location] == nil, departures.count >= capacity,
           let oldest = departures.min(by: { $0.value.deadline < $1.value.deadline }) {
            forgetDeparture(at: oldest.key)
        }
        if let replaced = departures.updateValue(departure, forKey: location), replaced.itemID != departure.itemID {
            releaseIfUnreferenced(replaced.itemID)
        }
        holds[departure.itemID] = departure.deadline
        return departure.deadline
    }

    /// A process put a file at `location` at `now`: the departure it takes over, if the document that left the
    /// name did so within the window, by the same process. The caller either completes the takeover
    /// (``tookOver(_:)``) or, when it cannot, leaves the departure to its window (``keep(_:at:)``).
    mutating func arrival(
        at location: ExternalReference.Location, processID: Int32, now: Moment
    ) -> Departure? {
        expire(now: now)
        guard processID != 0, let departure = departures[location], departure.processID == processID else {
            return nil
        }
        departures[location] = nil
        return departure
    }

    /// Puts back a departure taken with ``arrival(at:processID:now:)`` whose takeover did not happen.
    mutating func keep(_ departure: Departure, at location: ExternalReference.Location) {
        departures[location] = departure
    }

    /// The item of a departure was taken over by a new file (or came back to its name): its other departures and
    /// its hold end.
    mutating func tookOver(_ itemID: ItemID) {
        departures = departures.filter { $0.value.itemID != itemID }
        holds[itemID] = nil
        backups[itemID] = nil
    }

    /// A takeover left the backup `itemID` behind (a new item): its upload waits for the window.
    mutating func holdBackup(_ itemID: ItemID, now: Moment) -> Moment {
        expire(now: now)
        if backups.count >= capacity, let oldest = backups.min(by: { $0.value < $1.value }) {
            backups[oldest.key] = nil
            releaseIfUnreferenced(oldest.key)
        }
        let deadline = now &+ window
        backups[itemID] = deadline
        holds[itemID] = deadline
        return deadline
    }

    /// Whether the uploads of `itemID` wait.
    func isHeld(_ itemID: ItemID, now: Moment) -> Bool {
        guard let deadline = holds[itemID] else { return false }
        return now < deadline
    }

    /// Whether a document left `location` moments ago, so what another process put there waits for the
    /// departed item's upload.
    func isDeparted(_ location: ExternalReference.Location, now: Moment) -> Bool {
        guard let departure = departures[location] else { return false }
        return now < departure.deadline
    }

    /// The earliest end of a window still open, if any.
    var nextDeadline: Moment? {
        (departures.values.map(\.deadline) + holds.values).min()
    }

    /// Forgets departures and holds whose window ended at `now`.
    mutating func expire(now: Moment) {
        departures = departures.filter { now < $0.value.deadline }
        holds = holds.filter { now < $0.value }
        backups = backups.filter { now < $0.value }
    }

    private mutating func forgetDeparture(at location: ExternalReference.Location) {
        guard let departure = departures.removeValue(forKey: location) else { return }
        releaseIfUnreferenced(departure.itemID)
    }

    /// Ends the hold of `itemID` unless another departure or a backup still holds it.
    private mutating func releaseIfUnreferenced(_ itemID: ItemID) {
        if backups[itemID] != nil { return }
        if let deadline = departures.values.filter({ $0.itemID == itemID }).map(\.deadline).max() {
            holds[itemID] = deadline
        } else {
            holds[itemID] = nil
        }
    }
}
