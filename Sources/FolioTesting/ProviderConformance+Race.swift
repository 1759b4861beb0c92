import FolioCore

extension ProviderConformance {
    /// Two providers in two processes (two devices) race with the same conditional operation on one item, many
    /// rounds: every round exactly one wins and the other is refused (`.conflict` for a change at a base
    /// version, `.exists` for a name, `.notFound` for a change of an item deleted first), and the remote holds
    /// exactly the winner's result. Both processes take each side in turn.
    func checkConditionalChangesAtomicAcrossProcesses(_ space: ConformanceWorkspace, rival: ProviderRival)
        async throws
    {
        let rounds = max(options.raceRounds, 4)
        var file = try await space.createFile("raced.txt", Array("round 0".utf8))
        var overlapping = 0
        for round in 1...rounds {
            let outcome = try await raceModify(file, round: round, space, rival)
            file = outcome.file
            if outcome.overlapped { overlapping += 1 }
        }
        // Rounds in which one side ended before the other began test nothing: a loaded machine can make some so,
        // but not most.
        try space.expect(
            overlapping >= rounds / 10,
            "only \(overlapping) of \(rounds) rounds of two modifies ran at the same time: the race was not tested")
        for round in 1...(rounds / 4) {
            try await raceDeleteWithModify(round: round, rivalDeletes: round % 2 == 0, space, rival)
            try await raceCreate(round: round, space, rival)
            try await raceRename(round: round, space, rival)
        }
    }

    /// The moment both rivals start: far enough ahead for the command to reach the other process.
    private static func startInstant() -> UInt64 { RivalCommand.now() + 20_000_000 }

    /// Runs `ours` here and `theirs` in the rival process at the same instant; returns both answers.
    private func race(
        ours: RivalCommand, theirs: RivalCommand, _ space: ConformanceWorkspace, _ rival: ProviderRival
    ) async throws -> (ours: RivalAnswer, theirs: RivalAnswer) {
        try rival.send(theirs)
        let mine = await ours.run(on: space.provider)
        return (mine, try await rival.answer())
    }

    /// Both modify `file`'s content from its version: one new version, the other a conflict. Returns the file as
    /// the winner left it, and whether the two calls overlapped in time.
    private func raceModify(
        _ file: RemoteItem, round: Int, _ space: ConformanceWorkspace, _ rival: ProviderRival
    ) async throws -> (file: RemoteItem, overlapped: Bool) {
        let ourBytes = Array("ours, round \(round)".utf8)
        let theirBytes = Array("theirs, round \(round): other content".utf8)
        let start = Self.startInstant()
        let command = { (bytes: [UInt8]) in
            RivalCommand(
                operation: .modify, container: space.container, id: file.id, baseVersion: file.version,
                contents: try space.scratchFile(bytes).string, startAt: start)
        }
        let answers = try await race(ours: try command(ourBytes), theirs: try command(theirBytes), space, rival)
        let what = "round \(round) of two modifies of one version (ours: \(answers.ours), theirs: \(answers.theirs))"
        let outcomes = [answers.ours.outcome, answers.theirs.outcome]
        try space.expect(outcomes.sorted { $0.rawValue < $1.rawValue } == [.conflict, .done], what)
        let (winner, bytes) = answers.ours.outcome == .done ? (answers.ours, ourBytes) : (answers.theirs, theirBytes)
        guard let current = try await space.items()[file.id] else { throw space.failure("\(what): the file is gone") }
        try space.expect(current.version == winner.version, "\(what): the remote is at \(current.version)")
        let fetched = try await space.fetch(current)
        let stored = String(decoding: fetched.bytes, as: UTF8.self)
        try space.expect(fetched.bytes == bytes, "\(what): the remote has \(stored)")
        return (current, answers.ours.overlaps(answers.theirs))
    }

    /// One deletes a file at its version while the other changes its content: exactly one of them happens.
    private func raceDeleteWithModify(
        round: Int, rivalDeletes: Bool, _ space: ConformanceWorkspace, _ rival: ProviderRival
    ) async throws {
        let file = try await space.createFile("deleted-\(round).txt", Array("to delete".utf8))
        let newBytes = Array("changed instead, round \(round)".utf8)
        let start = Self.startInstant()
        let delete = RivalCommand(
            operation: .delete, container: space.container, id: file.id, baseVersion: file.version, startAt: start)
        let modify = RivalCommand(
            operation: .modify, container: space.container, id: file.id, baseVersion: file.version,
            contents: try space.scratchFile(newBytes).string, startAt: start)
        let answers = try await race(
            ours: rivalDeletes ? modify : delete, theirs: rivalDeletes ? delete : modify, space, rival)
        let (deleted, modified) = rivalDeletes ? (answers.theirs, answers.ours) : (answers.ours, answers.theirs)
        let what = "round \(round) of a delete (\(deleted)) racing a modify (\(modified))"
        let current = try await space.items()[file.id]
        switch (deleted.outcome, modified.outcome) {
        case (.done, .conflict), (.done, .notFound):
            try space.expect(current == nil, "\(what): the file is still there")
        case (.conflict, .done):
            guard let current else { throw space.failure("\(what): the modified file is gone") }
            let fetched = try await space.fetch(current)
            try space.expect(fetched.bytes == newBytes, "\(what): the remote lost the modify")
            try await space.provider.deleteItem(current.id, in: space.container, baseVersion: current.version)
        default:
            throw space.failure("\(what): expected exactly one to succeed")
        }
    }

    /// Both create a file (each its own id) under one name: one is created, the other is `.exists`.
    private func raceCreate(round: Int, _ space: ConformanceWorkspace, _ rival: ProviderRival) async throws {
        let name = "created-\(round).txt"
        let start = Self.startInstant()
        let command = { (bytes: String) in
            RivalCommand(
                operation: .create, container: space.container, id: .generate(), parentID: space.folder.id,
                name: name, contents: try space.scratchFile(Array(bytes.utf8)).string, startAt: start)
        }
        let ours = try command("ours")
        let theirs = try command("theirs, longer")
        let answers = try await race(ours: ours, theirs: theirs, space, rival)
        let what = "round \(round) of two creates of \(name) (ours: \(answers.ours), theirs: \(answers.theirs))"
        let outcomes = [answers.ours.outcome, answers.theirs.outcome]
        try space.expect(outcomes.sorted { $0.rawValue < $1.rawValue } == [.done, .exists], what)
        let winner = answers.ours.outcome == .done ? ours : theirs
        let named = try await space.items().values.filter { $0.name == name }
        try space.expect(named.map(\.id.rawValue) == [winner.id], "\(what): the remote has \(named)")
    }

    /// Both rename a file of their own to one new name: one is renamed, the other is `.exists` and stays.
    private func raceRename(round: Int, _ space: ConformanceWorkspace, _ rival: ProviderRival) async throws {
        let first = try await space.createFile("first-\(round).txt", Array("first".utf8))
        let second = try await space.createFile("second-\(round).txt", Array("second".utf8))
        let name = "renamed-\(round).txt"
        let start = Self.startInstant()
        let command = { (item: RemoteItem) in
            RivalCommand(
                operation: .rename, container: space.container, id: item.id, name: name,
                baseVersion: item.version, startAt: start)
        }
        let answers = try await race(ours: command(first), theirs: command(second), space, rival)
        let what = "round \(round) of two renames to \(name) (ours: \(answers.ours), theirs: \(answers.theirs))"
        let outcomes = [answers.ours.outcome, answers.theirs.outcome]
        try space.expect(outcomes.sorted { $0.rawValue < $1.rawValue } == [.done, .exists], what)
        let (winner, loser) = answers.ours.outcome == .done ? (first, second) : (second, first)
        let items = try await space.items()
        let winnerName = items[winner.id]?.name ?? "-"
        let loserName = items[loser.id]?.name ?? "-"
        try space.expect(winnerName == name, "\(what): the winner is named \(winnerName)")
        try space.expect(loserName == loser.name, "\(what): the loser is named \(loserName)")
    }
}
