import FolioCore

/// When to ask the provider again for the description of a placeholder it had none for: the device that has the
/// content may describe it a moment after this one saw the new version, so each version is asked about again on a
/// schedule (1 s, 3 s, 10 s, 30 s, 2 min), then no more.
///
/// Bounded: at most ``limit`` placeholders are followed at once. A `find` of a big tree meets every placeholder in
/// it, and most will never get a description (no device made one); one entry each would cost more than their nodes'
/// share of the daemon's memory allows. A placeholder met while the book is full is asked about once, when it is met
/// (and whenever it changes). Placeholders whose asks ran out are kept (so that a change of anything but the version
/// does not start them over) until room is needed (``makeRoom()``).
struct DescriptionAsks: Sendable {
    /// The delays of the asks after the first, in order.
    let schedule: [Duration]
    /// The most placeholders followed at once.
    let limit: Int

    /// The placeholders with an ask to come, and when.
    private(set) var due: [UInt64: ContinuousClock.Instant] = [:]
    /// Every placeholder followed: a hash of the version it was asked about, and how often it was asked.
    private var asked: [UInt64: (version: UInt64, count: Int)] = [:]
    /// How many of ``asked`` have no ask to come (room to make when the book is full).
    private var finished = 0

    init(schedule: [Duration], limit: Int) {
        self.schedule = schedule
        self.limit = limit
    }

    /// How many placeholders are followed (with asks to come or finished).
    var count: Int { asked.count }

    /// The time of the next ask, if any.
    var nextDue: ContinuousClock.Instant? { due.values.min() }

    /// The placeholders whose next ask is due at `now`.
    func dueAt(_ now: ContinuousClock.Instant) -> Set<UInt64> {
        Set(due.filter { $0.value <= now }.keys)
    }

    /// The provider had no description of `version` of `ino` (asked at `now`): schedules the next ask, or none when
    /// the asks of this version ran out or the book is full. Returns whether another ask is scheduled.
    @discardableResult
    mutating func noDescription(of ino: UInt64, version: String, at now: ContinuousClock.Instant) -> Bool {
        let hash = StableHash.fnv1a(version)
        if asked[ino] == nil, asked.count >= limit {
            makeRoom()
            guard asked.count < limit else { return false }
        }
        let previous = asked[ino]
        let count = previous.map { $0.version == hash ? $0.count + 1 : 1 } ?? 1
        if let previous, previous.count > schedule.count { finished -= 1 }
        asked[ino] = (hash, count)
        guard count <= schedule.count else {
            due.removeValue(forKey: ino)
            finished += 1
            return false
        }
        due[ino] = now + schedule[count - 1]
        return true
    }

    /// An ask is being made now (it will end in ``noDescription(of:version:at:)`` or ``forget(_:)``).
    mutating func asking(_ ino: UInt64) {
        due.removeValue(forKey: ino)
    }

    /// `ino` has its description, or is gone: it is no longer followed.
    mutating func forget(_ ino: UInt64) {
        due.removeValue(forKey: ino)
        if let previous = asked.removeValue(forKey: ino), previous.count > schedule.count { finished -= 1 }
    }

    /// Drops the placeholders with no ask to come, if any of them ran out of asks: those, and those being asked
    /// about right now (``asking(_:)``; if still without a description they start their asks over).
    private mutating func makeRoom() {
        guard finished > 0 else { return }
        asked = asked.filter { due[$0.key] != nil }
        finished = 0
    }
}
