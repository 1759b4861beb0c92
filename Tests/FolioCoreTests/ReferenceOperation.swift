import FolioCore
import FolioTesting

/// One step of a reference-model sequence (DESIGN.md §4 example 8): an operation of this device through the core,
/// of another device on the remote, of the sync engine, or of the daemon's life (a restart, `kill -9`).
///
/// Steps name no paths: each names its targets by a random number (`pick`) taken modulo what exists when it runs,
/// and a step with nothing to act on does nothing. So any subsequence of a sequence is a sequence too, which is
/// what shrinking a failing sequence to a minimal one needs.
enum ReferenceOperation: Hashable, Sendable, CustomStringConvertible {
    // This device, through the core.
    /// Writes a whole file (created, or truncated and written) in the picked folder.
    case write(folder: UInt32, name: Int, length: Int)
    /// Appends to the picked file.
    case append(file: UInt32)
    /// Makes a folder in the picked folder.
    case makeFolder(folder: UInt32, name: Int)
    /// Renames the picked item into the picked folder.
    case rename(item: UInt32, folder: UInt32, name: Int)
    /// Removes the picked file.
    case unlink(file: UInt32)
    /// Removes the picked folder.
    case removeFolder(folder: UInt32)
    /// Reads the picked file.
    case read(file: UInt32)
    /// Evicts the picked file.
    case evict(file: UInt32)
    /// Resolves the picked item's conflict.
    case resolve(item: UInt32, keep: ConflictResolution)
    // Another device, on the remote.
    /// Writes a file in the picked remote folder: new content for the file at that name, or a new file.
    case remoteWrite(folder: UInt32, name: Int, length: Int)
    /// Makes a folder in the picked remote folder.
    case remoteMakeFolder(folder: UInt32, name: Int)
    /// Renames the picked remote item into the picked remote folder.
    case remoteRename(item: UInt32, folder: UInt32, name: Int)
    /// Deletes the picked remote file or empty folder.
    case remoteDelete(item: UInt32)
    // The sync engine, by hand.
    /// Takes up to `count` pieces of upload work from the core (in flight, not sent yet).
    case takeUploads(count: Int)
    /// Sends the picked piece of work in flight to the provider, perhaps with a fault.
    case sendUpload(pick: UInt32, fault: UploadFault)
    /// Tells the core how the picked piece of work that was sent ended.
    case finishUpload(pick: UInt32)
    /// Asks the provider for the changes since the core's anchor (kept to be applied later).
    case fetchChanges
    /// Applies the oldest change set fetched.
    case applyChanges
    /// Lists the picked folder that needs listing.
    case listFolder(pick: UInt32)
    /// Takes the items the core asks for again.
    case takeAgain
    /// Keeps the remote side of conflicts (the content keeper's work).
    case keepConflicts
    /// Trims the remote's history: the core's anchor expires.
    case expireAnchors
    /// Time passes (the save window runs on the test's clock).
    case passTime(seconds: Int)
    /// This device's network goes down (every call to the remote fails `.offline`) or comes back.
    case network(offline: Bool)
    /// The group write runs.
    case flush
    // The daemon's life.
    /// Unmount and mount again.
    case remount
    /// `kill -9` and start again: what was not written to the store is lost.
    case crash
    /// Everything is uploaded and merged: this device and the remote must agree.
    case settle

    /// How a sent upload goes wrong.
    enum UploadFault: String, Hashable, Sendable {
        /// It does not.
        case none
        /// It fails before the remote changes (offline).
        case failsBefore
        /// The remote changes, and the answer is lost.
        case answerLost
    }

    /// The names the steps choose from (few, so that they collide).
    static let names = ["a", "b", "c", "doc.txt", "notes"]

    /// The Swift source of this step (to paste a minimal sequence into a test).
    var description: String {
        switch self {
        case .write(let folder, let name, let length): ".write(folder: \(folder), name: \(name), length: \(length))"
        case .append(let file): ".append(file: \(file))"
        case .makeFolder(let folder, let name): ".makeFolder(folder: \(folder), name: \(name))"
        case .rename(let item, let folder, let name): ".rename(item: \(item), folder: \(folder), name: \(name))"
        case .unlink(let file): ".unlink(file: \(file))"
        case .removeFolder(let folder): ".removeFolder(folder: \(folder))"
        case .read(let file): ".read(file: \(file))"
        case .evict(let file): ".evict(file: \(file))"
        case .resolve(let item, let keep): ".resolve(item: \(item), keep: .\(keep))"
        case .remoteWrite(let folder, let name, let length):
            ".remoteWrite(folder: \(folder), name: \(name), length: \(length))"
        case .remoteMakeFolder(let folder, let name): ".remoteMakeFolder(folder: \(folder), name: \(name))"
        case .remoteRename(let item, let folder, let name):
            ".remoteRename(item: \(item), folder: \(folder), name: \(name))"
        case .remoteDelete(let item): ".remoteDelete(item: \(item))"
        case .takeUploads(let count): ".takeUploads(count: \(count))"
        case .sendUpload(let pick, let fault): ".sendUpload(pick: \(pick), fault: .\(fault))"
        case .finishUpload(let pick): ".finishUpload(pick: \(pick))"
        case .fetchChanges: ".fetchChanges"
        case .applyChanges: ".applyChanges"
        case .listFolder(let pick): ".listFolder(pick: \(pick))"
        case .takeAgain: ".takeAgain"
        case .keepConflicts: ".keepConflicts"
        case .expireAnchors: ".expireAnchors"
        case .passTime(let seconds): ".passTime(seconds: \(seconds))"
        case .network(let offline): ".network(offline: \(offline))"
        case .flush: ".flush"
        case .remount: ".remount"
        case .crash: ".crash"
        case .settle: ".settle"
        }
    }

    /// A random sequence of `count` steps from `seed`: the same seed gives the same sequence everywhere.
    static func sequence(seed: UInt64, count: Int) -> [ReferenceOperation] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in generate(using: &random) }
    }

    /// One random step, weighted: about 40 % this device, 20 % another device, 40 % sync, and a few restarts,
    /// crashes, network failures and settles.
    static func generate(using random: inout SeededRandom) -> ReferenceOperation {
        func pick() -> UInt32 { UInt32.random(in: 0...UInt32.max, using: &random) }
        func name() -> Int { Int.random(in: 0..<names.count, using: &random) }
        func length() -> Int { Int.random(in: 0..<200, using: &random) }
        let choice = Int.random(in: 0..<1000, using: &random)
        switch choice {
        case 0..<100: return .write(folder: pick(), name: name(), length: length())
        case 100..<140: return .append(file: pick())
        case 140..<180: return .makeFolder(folder: pick(), name: name())
        case 180..<240: return .rename(item: pick(), folder: pick(), name: name())
        case 240..<290: return .unlink(file: pick())
        case 290..<310: return .removeFolder(folder: pick())
        case 310..<350: return .read(file: pick())
        case 350..<370: return .evict(file: pick())
        case 370..<385:
            return .resolve(item: pick(), keep: ConflictResolution.allCases.randomElement(using: &random) ?? .both)
        case 385..<465: return .remoteWrite(folder: pick(), name: name(), length: length())
        case 465..<495: return .remoteMakeFolder(folder: pick(), name: name())
        case 495..<535: return .remoteRename(item: pick(), folder: pick(), name: name())
        case 535..<575: return .remoteDelete(item: pick())
        case 575..<655: return .takeUploads(count: Int.random(in: 1...4, using: &random))
        case 655..<735:
            let roll = Int.random(in: 0..<10, using: &random)
            return .sendUpload(pick: pick(), fault: roll == 0 ? .failsBefore : roll == 1 ? .answerLost : .none)
        case 735..<815: return .finishUpload(pick: pick())
        case 815..<855: return .fetchChanges
        case 855..<895: return .applyChanges
        case 895..<935: return .listFolder(pick: pick())
        case 935..<945: return .takeAgain
        case 945..<960: return .keepConflicts
        case 960..<963: return .expireAnchors
        case 963..<971: return .passTime(seconds: Int.random(in: 1...4, using: &random))
        case 971..<978: return .network(offline: Bool.random(using: &random))
        case 978..<986: return .flush
        case 986..<991: return .remount
        case 991..<996: return .crash
        default: return .settle
        }
    }
}

extension ReferenceOperation {
    /// Picks one of `choices` by `pick`; `nil` if there are none.
    static func choose<T>(_ choices: [T], _ pick: UInt32) -> T? {
        choices.isEmpty ? nil : choices[Int(pick % UInt32(choices.count))]
    }
}
