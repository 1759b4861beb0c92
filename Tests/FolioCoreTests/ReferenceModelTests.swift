import FolioCore
import FolioTesting
import Foundation
import XCTest

/// Random sequences of this device's operations (write, append, mkdir, rename, unlink, rmdir, read, evict,
/// resolve), another device's on the remote (create, edit, rename, delete), the sync engine's steps by hand
/// (uploads taken, sent — sometimes failing or losing their answer — and finished; changes fetched and applied;
/// folders listed; conflicts kept), restarts and `kill -9`, checked against a model of what DESIGN.md §2 promises
/// (``ReferenceWorld`` says what is checked; DESIGN.md §4 example 8, mountpoint-s3's reftests).
///
/// A failing sequence is shrunk to a minimal one (steps removed while it still fails the same way) and printed
/// with its seed and the steps kept; pin it in ``regressionSeeds``. Environment: `REFTEST_SEEDS` (how many random
/// seeds, default 12), `REFTEST_STEPS` (steps per seed, default 150), `REFTEST_FIRST_SEED` (default 1),
/// `REFTEST_SEED` (one seed only), `REFTEST_KEPT` (only these steps of it: `3,17,42`), `REFTEST_SHRINK=0` (report
/// without shrinking), `REFTEST_SHRINK_BUDGET` (runs, default 400), `REFTEST_TRACE=1` (note the trees after every
/// step), `REFTEST_KNOWN=1` (run ``knownFailingSeeds``).
final class ReferenceModelTests: XCTestCase {
    /// Sequences that once failed, kept as regression tests (each with what it found). (Failures of the model, not
    /// of the core: the core's are in ``knownFailingSeeds`` until fixed, then move here.)
    static let regressionSeeds: [ReferenceCase] = [
        // Seed 1, shrunk: both devices make doc.txt. The upload of this device's is refused (the name is taken)
        // and needs the user: settling follows `folio status` (rename it, `folio retry`).
        ReferenceCase(steps: [.remoteWrite(folder: 0, name: 3, length: 163), .write(folder: 0, name: 3, length: 8)]),
        // Core defects this test found, fixed (issue 36). Seed 318's 150 steps, shrunk: another device makes notes;
        // this device merges it (a placeholder), the other device deletes it, this device renames it to a. The
        // rename's upload found it gone and the core created it again, empty, on the remote (and an open of it here
        // spun forever); now the delete is taken (nothing of its content was here).
        ReferenceCase(steps: [
            .remoteWrite(folder: 0, name: 4, length: 3), .fetchChanges, .applyChanges, .remoteDelete(item: 0),
            .rename(item: 0, folder: 0, name: 0),
        ]),
        // Seed 361's 150 steps, shrunk: this device merges notes (a placeholder at the other device's first
        // version), renames it to a and takes the rename's upload; the other device writes notes again; this device
        // removes a. The rename landed (changed elsewhere) and the removal's base moved to the other device's new
        // version, so the delete removed content nobody here saw; now the delete keeps its base and is refused.
        ReferenceCase(steps: [
            .remoteWrite(folder: 0, name: 4, length: 3), .fetchChanges, .applyChanges,
            .rename(item: 0, folder: 0, name: 0), .passTime(seconds: 4), .takeUploads(count: 1),
            .remoteWrite(folder: 0, name: 4, length: 5), .unlink(file: 0),
        ]),
        // Seed 189, shrunk by hand: a file removed here while it is conflicted goes with its conflict version (the
        // user removed the document, knowing it was conflicted): nothing is lost that nobody removed.
        ReferenceCase(steps: [
            .remoteWrite(folder: 0, name: 4, length: 3), .fetchChanges, .applyChanges, .append(file: 0),
            .takeUploads(count: 1), .remoteWrite(folder: 0, name: 4, length: 5), .sendUpload(pick: 0, fault: .none),
            .finishUpload(pick: 0), .keepConflicts, .unlink(file: 0),
        ]),
        // Seeds 136, 252 and 274: this device moves a folder into another one, which the other device moved into
        // the first: the remote refuses the move (a cycle) and it needs the user: settling follows `folio status`
        // (move it to the root, `folio retry`).
        ReferenceCase(steps: [
            .remoteMakeFolder(folder: 0, name: 0), .remoteMakeFolder(folder: 0, name: 1), .settle,
            .rename(item: 0, folder: 2, name: 0), .takeUploads(count: 1), .remoteRename(item: 1, folder: 1, name: 1),
        ]),
        // Seed 318, shrunk: a placeholder renamed here, the remote's copy replaced meanwhile (offline at first).
        ReferenceCase(steps: [
            .remoteWrite(folder: 0, name: 4, length: 3), .fetchChanges, .applyChanges, .network(offline: true),
            .read(file: 0), .remoteWrite(folder: 0, name: 4, length: 9), .network(offline: false),
            .rename(item: 0, folder: 0, name: 1), .read(file: 0),
        ]),
    ]

    /// Sequences that fail because of a defect of the core not fixed yet (``ReferenceDefect``), each a minimal one
    /// found by shrinking, with what it shows: skipped unless `REFTEST_KNOWN=1` (each runs avoiding the other
    /// defects). The random sequences avoid the steps that show them.
    static let knownFailingSeeds: [(sequence: ReferenceCase, defect: ReferenceDefect)] = [
        // Another device makes c; this device merges it and writes c/a; the other device deletes c. The merge
        // keeps c here (it holds a local change), but c/a's create fails `.notFound` forever: settling never ends.
        (ReferenceCase(steps: [
            .remoteMakeFolder(folder: 0, name: 2), .fetchChanges, .applyChanges, .write(folder: 1, name: 0, length: 3),
            .remoteDelete(item: 0),
        ]), .changeInFolderDeletedElsewhere),
        // The same with a folder made here (c/a), from seed 9's 150 steps.
        (ReferenceCase(steps: [
            .remoteMakeFolder(folder: 0, name: 2), .fetchChanges, .applyChanges, .makeFolder(folder: 1, name: 0),
            .remoteDelete(item: 0),
        ]), .changeInFolderDeletedElsewhere),
        // Another device makes c; this device lists it (empty) and removes it; the other device makes c/b before
        // that delete reaches it. The delete fails `.notEmpty` forever; c/b never shows here.
        (ReferenceCase(steps: [
            .remoteMakeFolder(folder: 0, name: 2), .fetchChanges, .applyChanges, .listFolder(pick: 0),
            .removeFolder(folder: 0), .remoteMakeFolder(folder: 1, name: 1),
        ]), .folderRemovedWhileFilledElsewhere),
        // Another device makes c and c/b; this device merges c (never listed) and removes it: `rmdir` succeeds
        // although the remote has c/b, and the delete fails `.notEmpty` forever.
        (ReferenceCase(steps: [
            .remoteMakeFolder(folder: 0, name: 2), .remoteMakeFolder(folder: 1, name: 1), .fetchChanges,
            .applyChanges, .removeFolder(folder: 0),
        ]), .folderRemovedWhileFilledElsewhere),
        // Seed 8's 150 steps, shrunk: this device makes c and sends its create (the answer not in yet); another
        // device makes c/b; the remote trims its history, so the next fetch resyncs: the resync lists the folders
        // the remote is known to have (not c) and takes an anchor past c/b. Once c's create is finished, c/b never
        // shows here.
        (ReferenceCase(steps: [
            .makeFolder(folder: 0, name: 2), .takeUploads(count: 4), .sendUpload(pick: 0, fault: .none),
            .remoteMakeFolder(folder: 1, name: 1), .expireAnchors, .fetchChanges,
        ]), .resyncWhileUploadsInFlight),
        // Another device makes c and c/b; this device lists c and writes c/a; the other device makes notes and
        // moves c into it. Settling: the merge keeps c here (it holds c/a) but drops c/b; the listing of notes
        // brings c, marked listed, with c/a only: c/b never shows here.
        (ReferenceCase(steps: [
            .remoteMakeFolder(folder: 0, name: 2), .remoteWrite(folder: 1, name: 1, length: 3), .settle,
            .write(folder: 1, name: 0, length: 3), .remoteMakeFolder(folder: 0, name: 4),
            .remoteRename(item: 0, folder: 2, name: 2),
        ]), .folderMovedIntoUnlistedFolder),
        // Seed 1227's 300 steps, shrunk: both devices make a (this device's never merged the other's); the other
        // device deletes its a; this device sends the create of its own; the other device writes it again; the
        // remote trims its history and the next fetch resyncs: a has a local change here, so the resync leaves it,
        // and its anchor passes the other device's write. This device keeps its own content at the version its
        // create made, never the newer one.
        (ReferenceCase(steps: [
            .remoteWrite(folder: 0, name: 0, length: 3), .write(folder: 0, name: 0, length: 4), .remoteDelete(item: 0),
            .takeUploads(count: 1), .expireAnchors, .sendUpload(pick: 0, fault: .none),
            .remoteWrite(folder: 0, name: 0, length: 5), .fetchChanges,
        ]), .resyncWhileUploadsInFlight),
        // Seed 1069's 300 steps, shrunk and made by hand: this device moves c into doc.txt, the other moves doc.txt
        // into c; after a restart this device lists c again (the listings of before are confirmed again): c and
        // doc.txt leave the tree.
        (ReferenceCase(steps: [
            .remoteMakeFolder(folder: 0, name: 2), .remoteMakeFolder(folder: 0, name: 3), .settle,
            .rename(item: 0, folder: 2, name: 3), .remoteRename(item: 1, folder: 1, name: 0), .remount,
            .listFolder(pick: 2),
        ]), .moveCycle),
        // Seed 1141's 300 steps, shrunk and made by hand: c is conflicted here (appended here, written there); this
        // device renames c over b: the conflict version goes, and so does the other device's version on the remote.
        (ReferenceCase(steps: [
            .remoteWrite(folder: 0, name: 1, length: 3), .remoteWrite(folder: 0, name: 2, length: 3), .settle,
            .append(file: 1), .remoteWrite(folder: 0, name: 2, length: 5), .fetchChanges, .applyChanges,
            .keepConflicts, .rename(item: 1, folder: 0, name: 1),
        ]), .conflictedFileRenamedOverAnother),
    ]

    /// The environment's setting `name` as a number.
    private static func setting(_ name: String) -> UInt64? {
        ProcessInfo.processInfo.environment[name].flatMap { UInt64($0) }
    }

    func testRandomSequences() async throws {
        let steps = Int(Self.setting("REFTEST_STEPS") ?? 150)
        let seeds: [UInt64] = if let seed = Self.setting("REFTEST_SEED") {
            [seed]
        } else {
            Array((0..<(Self.setting("REFTEST_SEEDS") ?? 12)).map { (Self.setting("REFTEST_FIRST_SEED") ?? 1) + $0 })
        }
        let kept = ProcessInfo.processInfo.environment["REFTEST_KEPT"].map {
            $0.split(separator: ",").compactMap { Int($0) }
        }
        let started = ContinuousClock.now
        for seed in seeds {
            try await check(
                ReferenceCase(seed: seed, length: steps, kept: kept), avoiding: Set(ReferenceDefect.allCases))
        }
        print("reference model: \(seeds.count) seeds × \(steps) steps in \(ContinuousClock.now - started)")
    }

    func testRegressionSeeds() async throws {
        for sequence in Self.regressionSeeds {
            try await check(sequence, avoiding: Set(ReferenceDefect.allCases))
        }
    }

    func testKnownFailingSeeds() async throws {
        guard ProcessInfo.processInfo.environment["REFTEST_KNOWN"] == "1" else {
            throw XCTSkip("known failures of the core, run with REFTEST_KNOWN=1")
        }
        for known in Self.knownFailingSeeds {
            print("known defect: \(known.defect)")
            try await check(known.sequence, avoiding: Set(ReferenceDefect.allCases).subtracting([known.defect]))
        }
    }

    /// Shrinking keeps what a failure needs and drops the rest (here a failure that needs two given steps in
    /// order).
    func testShrinkingFindsTheMinimalSequence() async {
        let needed = [17, 42]
        let minimal = await Self.shrink(Array(0..<100), failingStep: nil, budget: 500) { kept in
            guard let first = kept.firstIndex(of: needed[0]), let second = kept.firstIndex(of: needed[1]) else {
                return false
            }
            return first < second
        }
        XCTAssertEqual(minimal, needed)
    }

    // MARK: Running and shrinking

    /// Runs a sequence; on failure shrinks it and fails the test with the minimal sequence and its log.
    private func check(_ sequence: ReferenceCase, avoiding: Set<ReferenceDefect>) async throws {
        let operations = sequence.operations
        guard let failure = await Self.failure(of: operations, avoiding: avoiding) else {
            return
        }
        var report = "reference model: \(sequence) fails at step \(failure.step): \(failure.kind): \(failure.message)"
        if ProcessInfo.processInfo.environment["REFTEST_SHRINK"] != "0" {
            let budget = Int(Self.setting("REFTEST_SHRINK_BUDGET") ?? 400)
            var last = failure
            let kept = await Self.shrink(Array(operations.indices), failingStep: failure.step, budget: budget) { kept in
                guard let again = await Self.failure(
                    of: kept.map { operations[$0] }, avoiding: avoiding),
                    again.kind == failure.kind else { return false }
                last = again
                return true
            }
            let minimal = sequence.keeping(kept)
            report += "\nminimal: \(minimal) fails at step \(last.step): \(last.kind): \(last.message)\nsteps:\n"
                + minimal.operations.enumerated().map { "  \($0.offset): \($0.element)," }.joined(separator: "\n")
                + "\nwhat they did:\n" + last.log.map { "  " + $0 }.joined(separator: "\n")
        } else {
            report += "\nwhat the last steps did:\n" + failure.log.suffix(40).map { "  " + $0 }.joined(separator: "\n")
        }
        print(report)
        XCTFail(report)
    }

    /// What a run of `operations` found wrong, if anything.
    static func failure(
        of operations: [ReferenceOperation], avoiding: Set<ReferenceDefect>
    ) async -> ReferenceFailure? {
        do {
            let world = try await ReferenceWorld(avoiding: avoiding)
            try await world.run(operations)
            if ReferenceWorld.traces { print("passed:\n" + world.log.map { "  " + $0 }.joined(separator: "\n")) }
            return nil
        } catch let failure as ReferenceFailure {
            return failure
        } catch {
            return ReferenceFailure(step: -1, kind: "setup", message: "\(error)", log: [])
        }
    }

    /// Shrinks a failing sequence (`indices` of steps) to a minimal one: first the steps after the one that failed
    /// (never run) go, then chunks of steps, halving the chunk down to single steps, as long as `stillFails` says
    /// the rest still fails the same way; at most `budget` runs.
    static func shrink(
        _ indices: [Int], failingStep: Int?, budget: Int, stillFails: ([Int]) async -> Bool
    ) async -> [Int] {
        var current = indices
        var runs = 0
        if let failingStep, failingStep + 1 < current.count {
            let cut = Array(current.prefix(failingStep + 1))
            runs += 1
            if await stillFails(cut) { current = cut }
        }
        var chunk = max(1, current.count / 2)
        while runs < budget {
            var removed = false
            var start = 0
            while start < current.count, runs < budget {
                let candidate = Array(current[..<start] + current[min(current.count, start + chunk)...])
                runs += 1
                if await stillFails(candidate) {
                    current = candidate
                    removed = true
                } else {
                    start += chunk
                }
            }
            if chunk > 1 {
                chunk = max(1, chunk / 2)
            } else if !removed {
                break
            }
        }
        return current
    }
}
