import FolioCore
import FolioTesting
import Foundation
import XCTest

/// Random operation sequences (create, write, append, rename, delete, mkdir, rmdir, read, remount) against a
/// plain dictionary model of the tree (DESIGN.md §4 example 8). A failing seed is printed with the operation
/// that diverged; pin it in `regressionSeeds`.
final class ReferenceModelTests: XCTestCase {
    /// Seeds that once failed, kept as regression tests.
    static let regressionSeeds: [UInt64] = []

    enum Entry: Equatable {
        case directory
        case file(String)
    }

    func testRandomSequences() async throws {
        for seed in Self.regressionSeeds + Array(1...12) {
            try await run(seed: seed, operations: 150)
        }
    }

    private func run(seed: UInt64, operations: Int) async throws {
        var random = SeededRandom(seed: seed)
        let core = try CoreHarness()
        var model: [String: Entry] = ["": .directory]
        var log: [String] = []

        func directories() -> [String] { model.filter { $0.value == .directory }.map(\.key).sorted() }
        func files() -> [String] { model.filter { $0.value != .directory }.map(\.key).sorted() }
        func join(_ directory: String, _ name: String) -> String { directory.isEmpty ? name : directory + "/" + name }
        func parent(_ path: String) -> String { path.split(separator: "/").dropLast().joined(separator: "/") }
        func fail(_ message: String) -> String { "seed \(seed) diverged: \(message)\nops:\n" + log.suffix(15).joined(separator: "\n") }

        for step in 0..<operations {
            let names = ["a", "b", "c", "doc.txt", "notes"]
            let choice = Int.random(in: 0..<100, using: &random)
            let directory = directories().randomElement(using: &random)!
            let name = names.randomElement(using: &random)!
            let path = join(directory, name)
            switch choice {
            case 0..<25:
                let content = "v\(step)-" + String(repeating: "x", count: Int.random(in: 0..<300, using: &random))
                if model[path] == nil || (model[path] != .directory) {
                    log.append("write \(path)")
                    try await core.write(path, content)
                    model[path] = .file(content)
                }
            case 25..<35:
                if case .file(let old)? = model[path] {
                    log.append("append \(path)")
                    try await core.append(path, "+\(step)")
                    model[path] = .file(old + "+\(step)")
                }
            case 35..<45:
                if model[path] == nil {
                    log.append("mkdir \(path)")
                    _ = try core.fileSystem.makeDirectory(
                        parent: try core.ino(directory), name: name, permissions: 0o755, context: CoreHarness.context())
                    model[path] = .directory
                }
            case 45..<60:
                guard let source = (files() + directories().filter { !$0.isEmpty }).randomElement(using: &random) else { continue }
                let target = join(directories().randomElement(using: &random)!, names.randomElement(using: &random)!)
                let intoItself = target == source || target.hasPrefix(source + "/")
                let sourceIsDirectory = model[source] == .directory
                let targetEntry = model[target]
                let targetIsEmptyDirectory = targetEntry == .directory && !model.keys.contains { $0.hasPrefix(target + "/") }
                let allowed = !intoItself && (targetEntry == nil
                    || (!sourceIsDirectory && targetEntry != .directory)
                    || (sourceIsDirectory && targetIsEmptyDirectory))
                log.append("rename \(source) -> \(target) (expect \(allowed ? "ok" : "error"))")
                do {
                    try core.fileSystem.rename(
                        parent: try core.ino(parent(source)), name: String(source.split(separator: "/").last!),
                        newParent: try core.ino(parent(target)), newName: String(target.split(separator: "/").last!),
                        flags: [])
                    if source == target { continue }
                    XCTAssertTrue(allowed, fail("rename should have failed"))
                    var moved: [String: Entry] = [:]
                    for (key, value) in model where key == source || key.hasPrefix(source + "/") {
                        moved[target + key.dropFirst(source.count)] = value
                        model[key] = nil
                    }
                    model.merge(moved) { $1 }
                } catch {
                    XCTAssertFalse(allowed && source != target, fail("rename failed: \(error)"))
                }
            case 60..<72:
                guard let victim = files().randomElement(using: &random) else { continue }
                log.append("unlink \(victim)")
                try core.fileSystem.unlink(parent: try core.ino(parent(victim)), name: String(victim.split(separator: "/").last!))
                model[victim] = nil
            case 72..<78:
                guard let victim = directories().filter({ !$0.isEmpty }).randomElement(using: &random) else { continue }
                let empty = !model.keys.contains { $0.hasPrefix(victim + "/") }
                log.append("rmdir \(victim) (expect \(empty ? "ok" : "ENOTEMPTY"))")
                do {
                    try core.fileSystem.removeDirectory(parent: try core.ino(parent(victim)), name: String(victim.split(separator: "/").last!))
                    XCTAssertTrue(empty, fail("rmdir of a non-empty folder succeeded"))
                    model[victim] = nil
                } catch let error as FolioError {
                    XCTAssertFalse(empty, fail("rmdir failed: \(error)"))
                    XCTAssertEqual(error.errno, .directoryNotEmpty, fail("wrong errno"))
                }
            case 78..<95:
                guard let file = files().randomElement(using: &random), case .file(let expected)? = model[file] else { continue }
                log.append("read \(file)")
                let actual = try await core.read(file)
                XCTAssertEqual(actual, expected, fail("content of \(file)"))
            default:
                log.append("remount")
                try core.remount()
                try verifyTree(core, model, fail)
            }
        }
        try verifyTree(core, model, fail)
        for file in files() {
            guard case .file(let expected)? = model[file] else { continue }
            let actual = try await core.read(file)
            XCTAssertEqual(actual, expected, fail("final content of \(file)"))
        }
    }

    private func verifyTree(_ core: CoreHarness, _ model: [String: Entry], _ fail: (String) -> String) throws {
        for (path, entry) in model where entry == .directory {
            let expected = model.keys.filter { key in
                key != path && (path.isEmpty ? !key.contains("/") : key.hasPrefix(path + "/") && !key.dropFirst(path.count + 1).contains("/"))
            }.map { String($0.split(separator: "/").last!) }.sorted()
            XCTAssertEqual(try core.list(path), expected, fail("listing of /\(path)"))
        }
    }
}
