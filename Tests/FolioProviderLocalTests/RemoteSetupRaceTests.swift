import FolioCore
import FolioProviderLocal
import Foundation
import SystemPackage
import XCTest

/// Several processes setting up one remote at the same moment (two daemons mounting a new remote, a provider
/// from before identities opened twice): every read-modify-write of the manifest is made under the remote's
/// lock, so they all end with one identity and every container each of them added.
final class RemoteSetupRaceTests: XCTestCase {
    /// The variable that names the remote, and makes ``testSetUpAsChild()`` run.
    static let remoteVariable = "FOLIO_SETUP_RACE_REMOTE"
    /// The variable that numbers the child.
    static let indexVariable = "FOLIO_SETUP_RACE_INDEX"
    /// What starts a child's answer line.
    static let marker = "FOLIO-SETUP-RACE "
    /// How many processes race.
    static let children = 6

    func testProcessesSettingUpOneRemoteAtOnceAgreeOnOneIdentity() async throws {
        let base = NSTemporaryDirectory() + "folio-setup-race-\(UUID().uuidString)"
        let root = FilePath(base + "/remote")
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }

        // A new folder: every process makes it a remote, adds a container and opens a provider.
        let fresh = try race(root: root, round: "fresh", signals: base)
        XCTAssertEqual(Set(fresh).count, 1, "one identity for all: \(fresh)")
        XCTAssertEqual(fresh.first, LocalProvider.remoteID(at: root))

        // A remote from before identities: every process opening it makes one, and they agree.
        let manifest = root.appending(".folio-remote.json").string
        var json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifest)))
                as? [String: Any])
        json["remoteId"] = nil
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: manifest))
        XCTAssertNil(LocalProvider.remoteID(at: root))
        let old = try race(root: root, round: "old", signals: base)
        XCTAssertEqual(Set(old).count, 1, "one identity for all: \(old)")
        XCTAssertEqual(old.first, LocalProvider.remoteID(at: root))

        // No process dropped another's container from the manifest.
        let provider = try LocalProvider(root: root)
        let ids = Set(try await provider.listContainers().map(\.id.rawValue))
        for round in ["fresh", "old"] {
            for index in 0..<Self.children {
                XCTAssertTrue(ids.contains("com.example.\(round)\(index)"), "\(round) \(index) in \(ids)")
            }
        }
        let entries = (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifest)))
            as? [String: Any])?["containers"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.count, 1 + 2 * Self.children, "\(entries)")
    }

    /// Runs ``children`` processes that set up `root` at once; returns the identity each of them got.
    private func race(root: FilePath, round: String, signals: String) throws -> [String] {
        let go = signals + "/go-\(round)"
        var processes: [(Process, Pipe)] = []
        defer { for (process, _) in processes where process.isRunning { process.terminate() } }
        for index in 0..<Self.children {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
            process.arguments = ["FolioProviderLocalTests.RemoteSetupRaceTests/testSetUpAsChild"]
            process.environment = ProcessInfo.processInfo.environment.merging([
                Self.remoteVariable: root.string, Self.indexVariable: "\(round)\(index)",
                "FOLIO_SETUP_RACE_SIGNALS": signals, "FOLIO_SETUP_RACE_GO": go,
            ]) { $1 }
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            processes.append((process, output))
        }
        // All started and waiting: then all go at once.
        XCTAssertTrue(poll(timeout: 120) {
            (0..<Self.children).allSatisfy {
                FileManager.default.fileExists(atPath: signals + "/ready-\(round)\($0)")
            }
        }, "the children did not start")
        _ = FileManager.default.createFile(atPath: go, contents: nil)
        var identities: [String] = []
        for (process, output) in processes {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertTrue(poll(timeout: 60) { !process.isRunning })
            let line = text.split(separator: "\n").first { $0.hasPrefix(Self.marker) }
            guard let line else {
                XCTFail("no answer from a child: \(text)")
                continue
            }
            let answer = String(line.dropFirst(Self.marker.count))
            XCTAssertTrue(answer.hasPrefix("id "), answer)
            identities.append(String(answer.dropFirst(3)))
        }
        return identities
    }

    /// Sets up the remote as a daemon mounting it does, when run as a child of the race; skipped otherwise.
    func testSetUpAsChild() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let remote = environment[Self.remoteVariable], let index = environment[Self.indexVariable],
              let signals = environment["FOLIO_SETUP_RACE_SIGNALS"], let go = environment["FOLIO_SETUP_RACE_GO"]
        else {
            throw XCTSkip("the entry point of a child process of the set-up race")
        }
        _ = FileManager.default.createFile(atPath: signals + "/ready-\(index)", contents: nil)
        _ = poll(timeout: 120) { FileManager.default.fileExists(atPath: go) }
        let root = FilePath(remote)
        do {
            if !LocalProvider.isRemote(at: root) { try LocalProvider.initialize(at: root) }
            try LocalProvider.addContainer(
                Container(id: ContainerID("com.example.\(index)"), displayName: index, isPublic: true), at: root)
            let provider = try LocalProvider(root: root)
            print(Self.marker + "id " + provider.remoteID)
        } catch {
            print(Self.marker + "error \(error)")
        }
    }

    /// Polls `condition` every millisecond until it holds or `timeout` seconds passed.
    private func poll(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(1000)
        }
        return condition()
    }
}
