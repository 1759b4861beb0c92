import FolioProviderLocal
import FolioTestServers
import Foundation
import SystemPackage
import XCTest

/// The command-line tool as a user runs it: `folio demo`, background `folio mount`, `status`, `unmount`, errors.
class CLITests: XCTestCase {
    private let home = NSTemporaryDirectory() + "folio-home-\(UUID().uuidString.prefix(8))"
    /// What `folio mount --remote` is given: a folder in `home`, or the address of the class's server.
    private var remoteAddress = ""

    /// The kind of remote the mounts of the class use (as ``MountTestCase/remote``).
    class var remote: TestRemote { .local }

    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/fuse"), "needs /dev/fuse")
        try FileManager.default.createDirectory(atPath: home + "/run", withIntermediateDirectories: true)
        remoteAddress = home + "/remote"
        if Self.remote == .apache {
            let server = try startOrSkip { try ApacheServer() }
            addTeardownBlock { server.stop() }
            let made = try server.request("MKCOL", MountFixture.serverCollection)
            XCTAssertEqual(made.status, 201, made.text)
            remoteAddress = server.baseURL.absoluteString + MountFixture.serverCollection
        }
        addTeardownBlock { [home] in
            Shell.run("for m in \(home)/Folio \(home)/mnt; do fusermount3 -u -z $m 2>/dev/null; done; pkill -f 'state \(home)' ; true")
            try? FileManager.default.removeItem(atPath: home)
        }
    }

    private func folio(_ arguments: String, timeout: TimeInterval = 120) -> CommandResult {
        Shell.run(
            "'\(MountFixture.executable)' \(arguments)", timeout: timeout,
            environment: ["HOME": home, "XDG_RUNTIME_DIR": home + "/run"])
    }

    func testDemoMountsTheSampleRemote() throws {
        if Self.remote == .apache {
            throw XCTSkip("local provider only: `folio demo` makes its own sample remote folder")
        }
        let demo = folio("demo")
        XCTAssertEqual(demo.status, 0, demo.stderr)
        XCTAssertTrue(demo.stdout.contains("Try"))
        let mount = home + "/Folio"
        let root = Shell.check("ls '\(mount)'")
        XCTAssertTrue(root.contains("Notes"), "the public app container is a folder of the root")
        XCTAssertFalse(root.contains("Secret"), "private containers are not in the full view")
        XCTAssertEqual(Shell.check("getfattr --only-values -n user.folio.container '\(mount)/Notes'"), "com.example.notes")
        let sizes = Shell.check("find '\(mount)' -type f -printf '%s\\n' | sort -n | tail -1")
        XCTAssertGreaterThanOrEqual(Int(sizes.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 64 << 20)
        XCTAssertTrue(Shell.check("find '\(mount)' -name '*.png' | wc -l") != "0\n")
        let again = folio("demo")
        XCTAssertEqual(again.status, 0)
        XCTAssertTrue(again.stdout.contains("already mounted"))
        let status = folio("status '\(mount)'")
        XCTAssertTrue(status.stdout.contains("provider: online"), status.stdout)
        XCTAssertEqual(folio("unmount '\(mount)'").status, 0)
        XCTAssertFalse(Shell.check("cat /proc/self/mountinfo").contains(mount))
    }

    func testBackgroundMountStatusAndUnmount() throws {
        let mnt = home + "/mnt"
        try FileManager.default.createDirectory(atPath: mnt, withIntermediateDirectories: true)
        let mounted = folio("mount --remote '\(remoteAddress)' '\(mnt)'")
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        Shell.check("echo hi > '\(mnt)/x.txt'")
        let item = folio("status --json '\(mnt)/x.txt'")
        let json = try JSONSerialization.jsonObject(with: Data(item.stdout.utf8)) as? [String: Any]
        XCTAssertEqual((json?["item"] as? [String: Any])?["path"] as? String, "x.txt")
        XCTAssertNotNil((json?["item"] as? [String: Any])?["state"])
        XCTAssertEqual(folio("unmount '\(mnt)'").status, 0)
        // Mounting again finds the same tree.
        XCTAssertEqual(folio("mount --remote '\(remoteAddress)' '\(mnt)'").status, 0)
        XCTAssertEqual(Shell.check("cat '\(mnt)/x.txt'"), "hi\n")
        XCTAssertEqual(folio("unmount '\(mnt)'").status, 0)
    }

    func testClearErrors() throws {
        if Self.remote == .apache {
            throw XCTSkip("local provider only: a missing mountpoint and a remote folder inside another remote")
        }
        let missing = folio("mount --remote '\(home)/remote' '\(home)/does-not-exist'")
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("is not a folder"), missing.stderr)
        // A folder of documents inside another remote cannot be adopted (AdoptedFolderTests has the other cases).
        let inner = home + "/outer/com.folio.drive/inner"
        try LocalProvider.initialize(at: FilePath(home + "/outer"))
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: inner + "/precious.txt", contents: Data("keep".utf8))
        try FileManager.default.createDirectory(atPath: home + "/mnt", withIntermediateDirectories: true)
        let refused = folio("mount --remote '\(inner)' '\(home)/mnt'")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("is inside the Folio remote"), refused.stderr)
        XCTAssertEqual(try String(contentsOfFile: inner + "/precious.txt", encoding: .utf8), "keep")
        let status = folio("status '\(home)'")
        XCTAssertNotEqual(status.status, 0)
        XCTAssertTrue(status.stderr.contains("not inside a running Folio mount"), status.stderr)
    }
}
