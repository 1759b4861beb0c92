import FolioCore
import Foundation
import XCTest

/// Containers (issue 16, "Containers and views"): `folio containers`, and an app's first `folio mount --app ID`
/// making its container on the remote, where a second device (a second daemon with its own state) finds it.
class ContainerTests: MountTestCase {
    override func prepareRemote() throws {
        try fixture.addContainer(Container(id: ContainerID("com.example.secret"), displayName: "Secret", isPublic: false))
        try FileManager.default.createDirectory(
            atPath: fixture.remotePath("Vault", container: "com.example.secret"), withIntermediateDirectories: true)
        try Data("private".utf8).write(to: URL(fileURLWithPath: fixture.remotePath(
            "Vault/key.txt", container: "com.example.secret")))
        try FileManager.default.createDirectory(atPath: fixture.remotePath("Docs"), withIntermediateDirectories: true)
        try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: fixture.remotePath("Docs/a.bin")))
        try Data("hello".utf8).write(to: URL(fileURLWithPath: fixture.remotePath("Docs/b.txt")))
        fixture.handRemoteToServer()
    }

    private func containers(_ fixture: MountFixture) throws -> [String: [String: Any]] {
        let result = fixture.folio("containers --json '\(fixture.mountpoint)'")
        XCTAssertEqual(result.status, 0, result.stderr)
        let list = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]], result.stdout)
        return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as? String ?? "", $0) })
    }

    private func mountPoint(_ name: String) throws -> String {
        let path = fixture.root + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { Shell.run("fusermount3 -u -z '\(path)' 2>/dev/null; true") }
        return path
    }

    func testContainersAreListedWithWhatThisMachineKnowsAndHas() throws {
        Shell.check("ls -R '\(fixture.mountpoint)' > /dev/null && cat '\(fixture.path("Docs/b.txt"))' > /dev/null")
        let listed = try containers(fixture)
        XCTAssertEqual(Set(listed.keys), ["com.folio.drive", "com.example.secret"])
        let drive = try XCTUnwrap(listed["com.folio.drive"])
        XCTAssertEqual(drive["displayName"] as? String, "Drive")
        XCTAssertEqual(drive["isPublic"] as? Bool, true)
        XCTAssertEqual(drive["items"] as? Int, 3, "Docs, a.bin, b.txt")
        XCTAssertEqual(drive["size"] as? Int, 5005)
        XCTAssertEqual(drive["localSize"] as? Int, 5, "only b.txt was read")
        XCTAssertEqual(drive["foldersNotListed"] as? Int, 0)
        let secret = try XCTUnwrap(listed["com.example.secret"])
        XCTAssertEqual(secret["isPublic"] as? Bool, false)
        XCTAssertEqual(secret["displayName"] as? String, "Secret")
        XCTAssertEqual(secret["foldersNotListed"] as? Int, 1, "a private container no view has shown yet")

        let text = fixture.folio("containers '\(fixture.path("Docs"))'")
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("com.folio.drive\tDrive\tpublic\t3\t5005\t5\t0"), text.stdout)
        let outside = fixture.folio("containers /")
        XCTAssertNotEqual(outside.status, 0)
        XCTAssertTrue(outside.stderr.contains("not inside a Folio mount") || !outside.stderr.isEmpty, outside.stderr)
    }

    func testOfflineTheContainersKnownHereAreListedAndNoneIsMade() throws {
        try skipOverWebDAV("takes the remote offline with the local provider's network simulation")
        Shell.check("ls -R '\(fixture.mountpoint)' > /dev/null")
        try fixture.simulateNetwork(#"{"offline": true}"#)
        addTeardownBlock { [fixture] in try? fixture?.simulateNetwork(nil) }
        let listed = try containers(fixture)
        XCTAssertEqual(Set(listed.keys), ["com.folio.drive", "com.example.secret"], "what this machine knows")
        XCTAssertEqual(listed["com.folio.drive"]?["items"] as? Int, 3)
        let made = fixture.folio("mount --app com.example.later --of '\(fixture.mountpoint)' '\(try mountPoint("later"))'")
        XCTAssertNotEqual(made.status, 0)
        XCTAssertTrue(made.stderr.contains("offline"), made.stderr)
        try fixture.simulateNetwork(nil)
        let again = fixture.folio("mount --app com.example.later --of '\(fixture.mountpoint)' '\(try mountPoint("later"))'")
        XCTAssertEqual(again.status, 0, "online again: " + again.stderr)
        XCTAssertNotNil(try containers(fixture)["com.example.later"])
    }

    func testAnAppsFirstMountMakesItsContainerWhichASecondDeviceSees() throws {
        let other = try MountFixture(remote: fixture.remote)
        addTeardownBlock { other.tearDown() }
        try other.start()

        // A private container (the default), made by the first mount of its app view.
        let notes = try mountPoint("notes")
        let made = fixture.folio("mount --app com.example.newnotes --of '\(fixture.mountpoint)' '\(notes)'")
        XCTAssertEqual(made.status, 0, made.stderr)
        Shell.check("mkdir '\(notes)/Inbox' && printf 'first note' > '\(notes)/Inbox/n.txt'")
        fixture.waitForUploads()
        XCTAssertEqual(fixture.remoteText("Inbox/n.txt", container: "com.example.newnotes"), "first note")
        XCTAssertFalse(
            Shell.check("ls -A '\(fixture.mountpoint)'").contains("newnotes"), "private: not in the full view")

        // A public one with a display name: a folder of the full view, here and on the other device.
        let journal = try mountPoint("journal")
        let publicMade = fixture.folio(
            "mount --app com.example.journal --public --display-name 'My Journal' --of '\(fixture.mountpoint)' "
                + "'\(journal)'")
        XCTAssertEqual(publicMade.status, 0, publicMade.stderr)
        Shell.check("printf 'day one' > '\(journal)/day1.txt'")
        XCTAssertEqual(Shell.check("cat '\(fixture.path("My Journal/day1.txt"))'"), "day one")
        fixture.waitForUploads()

        // The second device lists both, and shows what the first wrote once its changes arrive.
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            FileManager.default.fileExists(atPath: other.path("My Journal/day1.txt"))
        }, "the public container reached the other device")
        XCTAssertEqual(Shell.check("cat '\(other.path("My Journal/day1.txt"))'"), "day one")
        let listed = try containers(other)
        XCTAssertEqual(listed["com.example.newnotes"]?["isPublic"] as? Bool, false)
        XCTAssertEqual(listed["com.example.journal"]?["displayName"] as? String, "My Journal")
        XCTAssertEqual(listed["com.example.journal"]?["isPublic"] as? Bool, true)
        let otherNotes = other.root + "/notes"
        try FileManager.default.createDirectory(atPath: otherNotes, withIntermediateDirectories: true)
        addTeardownBlock { Shell.run("fusermount3 -u -z '\(otherNotes)' 2>/dev/null; true") }
        // Mounting it there again changes nothing of the container (--public is for a container not made yet).
        let attached = other.folio("mount --app com.example.newnotes --public --of '\(other.mountpoint)' '\(otherNotes)'")
        XCTAssertEqual(attached.status, 0, attached.stderr)
        XCTAssertTrue(Shell.waitUntil(timeout: 30) {
            (try? String(contentsOfFile: otherNotes + "/Inbox/n.txt", encoding: .utf8)) == "first note"
        })
        XCTAssertEqual(try containers(other)["com.example.newnotes"]?["isPublic"] as? Bool, false)

        // Ids that are not reverse-DNS names are refused, and nothing is made.
        for bad in ["nodots", ".hidden.app", "com..example", "com.example/evil", "com.exa mple"] {
            let refused = fixture.folio("mount --app '\(bad)' --of '\(fixture.mountpoint)' '\(try mountPoint("bad"))'")
            XCTAssertNotEqual(refused.status, 0, bad)
            XCTAssertTrue(refused.stderr.contains("is not a container id"), bad + ": " + refused.stderr)
        }
        XCTAssertEqual(Set(try containers(fixture).keys), [
            "com.folio.drive", "com.example.secret", "com.example.newnotes", "com.example.journal",
        ])
    }

    /// Two devices mount one new app's view at the same instant, several rounds: one container each time, known
    /// to both, with one description (the first's; the other's is not written over it).
    func testTwoDevicesMakingOneAppsContainerAtOnceMakeOne() throws {
        let other = try MountFixture(remote: fixture.remote)
        addTeardownBlock { other.tearDown() }
        try other.start()
        let executable = MountFixture.executable
        for round in 1...6 {
            let app = "com.example.race\(round)"
            let here = try mountPoint("race\(round)-here")
            let there = other.root + "/race\(round)"
            try FileManager.default.createDirectory(atPath: there, withIntermediateDirectories: true)
            addTeardownBlock { Shell.run("fusermount3 -u -z '\(there)' 2>/dev/null; true") }
            let script = [
                "XDG_RUNTIME_DIR='\(fixture.runtime)' '\(executable)' mount --app \(app) --display-name Here "
                    + "--of '\(fixture.mountpoint)' '\(here)' > /dev/null & a=$!",
                "XDG_RUNTIME_DIR='\(other.runtime)' '\(executable)' mount --app \(app) --display-name There "
                    + "--of '\(other.mountpoint)' '\(there)' > /dev/null & b=$!",
                "wait $a; ra=$?; wait $b; rb=$?; echo \"$ra $rb\"",
            ].joined(separator: "\n")
            let both = Shell.run(script)
            XCTAssertEqual(both.stdout, "0 0\n", "round \(round): " + both.stderr)
            let names = try [fixture!, other].map { device in try containers(device)[app]?["displayName"] as? String }
            XCTAssertEqual(Set(names.compactMap { $0 }).count, 1, "round \(round): one description, \(names)")
            XCTAssertTrue(["Here", "There"].contains(names.first.flatMap { $0 } ?? ""), "round \(round): \(names)")
            Shell.check("printf \(round) > '\(here)/r.txt'")
            fixture.waitForUploads()
            XCTAssertTrue(Shell.waitUntil(timeout: 30) {
                (try? String(contentsOfFile: there + "/r.txt", encoding: .utf8)) == "\(round)"
            }, "round \(round): one container, seen from both")
        }
    }

    func testAnAppViewDaemonOfItsOwnMakesTheContainerAtItsFirstMount() throws {
        let own = try mountPoint("own")
        let state = fixture.root + "/own-state"
        let result = fixture.folio(
            "mount --remote '\(fixture.remote)' --state '\(state)' --app com.example.solo --display-name Solo '\(own)'")
        XCTAssertEqual(result.status, 0, result.stderr)
        addTeardownBlock { [fixture] in fixture?.folio("unmount '\(own)'") }
        Shell.check("printf solo > '\(own)/s.txt'")
        XCTAssertEqual(fixture.folio("unmount --wait '\(own)'").status, 0)
        XCTAssertEqual(fixture.remoteText("s.txt", container: "com.example.solo"), "solo")
        XCTAssertEqual(try containers(fixture)["com.example.solo"]?["displayName"] as? String, "Solo")
    }
}
