import FolioCore
import Foundation
import XCTest

/// Issue 19 "Tests on a real desktop": GNOME Files (Nautilus 43), Thunar 4.18 with tumbler and Dolphin 22.12, from Debian's
/// packages, in an Xvfb display, open a folder of placeholders on another device than the one that wrote them.
/// Downloads are counted with `user.folio.state`, never by timing: the photos Folio has thumbnails of stay
/// placeholders, the big video and disk image and the text are not downloaded whole, and two images put on the
/// remote by hand (which no Folio device ever had the content of, so no thumbnail) are downloaded by the file
/// manager to make its own, which shows it was at work on the folder while the others stayed untouched. The
/// screenshots are kept in the fixture's folder (and in `$FOLIO_SCREENSHOTS` if set): the README shows them.
final class DesktopTests: MountTestCase {
    override var mountArguments: [String] { ["--poll-interval", "600"] }

    private var display = 0
    private var xvfb: Process?

    override func setUpWithError() throws {
        for tool in ["/usr/bin/Xvfb", "/usr/bin/nautilus", "/usr/bin/thunar", "/usr/bin/dolphin", "/usr/bin/import",
                     "/usr/bin/xdotool", "/usr/bin/dbus-run-session"] {
            try XCTSkipUnless(
                FileManager.default.isExecutableFile(atPath: tool),
                "needs \(tool) (Debian xvfb, nautilus, thunar, tumbler, dolphin, kio-extras, imagemagick, xdotool, "
                    + "dbus-daemon: scripts/bootstrap)")
        }
        try super.setUpWithError()
        try startDisplay()
    }

    override func prepareRemote() throws {
        // Two images made by hand on the remote: no device ever described them.
        let folder = fixture.remoteFolder + "/com.folio.drive/Pictures"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 1...2 {
            try Data(Self.image(width: 180 + index, height: 140, seed: 200)).write(
                to: URL(fileURLWithPath: "\(folder)/byhand\(index).png"))
        }
    }

    static func image(width: Int, height: Int, seed: UInt8) -> [UInt8] {
        PNGEncoder.encode(width: width, height: height) { x, y in (UInt8(x & 255), UInt8(y & 255), seed &+ UInt8(x / 40)) }
    }

    /// Starts Xvfb on a display nobody uses; ended by the test's teardown.
    private func startDisplay() throws {
        var number = 90 + Int(getpid() % 40)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)")
            || FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") {
            number += 1
        }
        display = number
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        process.arguments = [":\(number)", "-screen", "0", "1280x800x24", "-nolisten", "tcp"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        xvfb = process
        addTeardownBlock { [process] in
            process.terminate()
            process.waitUntilExit()
        }
        XCTAssertTrue(Shell.waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") },
                      "Xvfb did not start")
    }

    /// The device that wrote the documents: photos with content here (so Folio makes their thumbnails), a big
    /// video and disk image, a text.
    private func writeDocuments() throws {
        Shell.check("mkdir -p '\(fixture.path("Pictures"))'")
        for index in 1...6 {
            try Data(Self.image(width: 200 + 10 * index, height: 150, seed: UInt8(index * 30))).write(
                to: URL(fileURLWithPath: fixture.path("Pictures/photo\(index).png")))
        }
        Shell.check("""
            head -c $((24 << 20)) /dev/urandom > '\(fixture.path("Pictures/holiday.mp4"))'
            head -c $((24 << 20)) /dev/urandom > '\(fixture.path("Pictures/backup.iso"))'
            echo 'a list of places' > '\(fixture.path("Pictures/notes.txt"))'
            """)
        fixture.waitForUploads(timeout: 120)
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            (1...6).allSatisfy { ExtendedAttributes.value("user.mime_type", of: self.fixture.path("Pictures/photo\($0).png")) == "image/png" }
        }, "described on the writing device; log:\n\(fixture.log.suffix(3000))")
    }

    /// Another device, whose desktop is `desktop` (`XDG_CURRENT_DESKTOP`), on a link of 20 MiB/s and 50 ms.
    private func startViewingDevice(desktop: String) throws -> MountFixture {
        let device = try MountFixture(extraArguments: ["--poll-interval", "600"], remote: fixture.remote)
        device.extraEnvironment = ["XDG_CURRENT_DESKTOP": desktop]
        addTeardownBlock { device.tearDown() }
        try device.start()
        try fixture.simulateNetwork(#"{"latencyMilliseconds": 50, "bandwidthBytesPerSecond": \#(20 << 20), "errorRate": 0}"#)
        // Its thumbnail cache fills once it lists the folder.
        _ = try FileManager.default.contentsOfDirectory(atPath: device.path("Pictures"))
        XCTAssertTrue(Shell.waitUntil(timeout: 60) {
            (1...6).allSatisfy { self.thumbnailIsValid(device, "Pictures/photo\($0).png") }
        }, "the viewing device's cache has the photos' thumbnails; log:\n\(device.log.suffix(3000))")
        return device
    }

    /// Whether the thumbnail cache of `device` has a thumbnail of `relative` (GIO finds it; GLib 2.74 takes it for
    /// valid only in whole seconds, the form of every desktop but Xfce's).
    private func thumbnailIsValid(_ device: MountFixture, _ relative: String) -> Bool {
        let info = Shell.run("gio info -a 'thumbnail::*' '\(device.path(relative))'", environment: device.environment).stdout
        return info.contains("thumbnail::is-valid: TRUE")
            || (device.extraEnvironment["XDG_CURRENT_DESKTOP"] == "XFCE" && info.contains("thumbnail::path: "))
    }

    private func state(_ device: MountFixture, _ relative: String) -> String {
        ExtendedAttributes.value("user.folio.state", of: device.path(relative)) ?? "?"
    }

    /// Opens `folder` of `device` in a file manager (`command`: its command line before the folder) in a private
    /// session on the display, until the two images made by hand are downloaded (the file manager made their
    /// thumbnails), three attempts of 30 s at most; takes a screenshot. Returns the screenshot's path.
    private func browse(_ device: MountFixture, _ folder: String, with command: String, name: String) throws -> String {
        let home = fixture.root + "/home-\(name)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let shot = fixture.root + "/\(name).png"
        let handmade = ["byhand1.png", "byhand2.png"].map { "'\(device.path(folder + "/" + $0))'" }.joined(separator: " ")
        // (The daemon was told the desktop; the file manager is not: GNOME's would wait for a GNOME session.)
        // Nautilus 43 in Xvfb, started for the first time in a new home on the folder of the mount, now and then
        // never ends its "Loading…" (about half the time here; not once in 12 tries on a plain folder of the same
        // files, nor on a mount with libfuse's debug output on, nor in 8 tries once it had been started on a local
        // folder first). Its threads then all wait in its main loop and thread pool, none in a request to the
        // mount; the cause is not found yet (README, limitations). So the manager is first started on the home
        // folder and closed; and one that has not thumbnailed the images by hand within 30 s is closed and started
        // again, three times at most. What is checked holds over every attempt: a download by any of them counts.
        let script = """
            unset XDG_CURRENT_DESKTOP
            done_by_hand() {
                n=0
                for f in \(handmade); do [ "$(getfattr --only-values -n user.folio.state "$f" 2>/dev/null)" = materialized ] && n=$((n+1)); done
                [ $n = 2 ]
            }
            \(command) '\(home)' > '\(home)/manager-0.log' 2>&1 &
            first=$!
            for i in $(seq 1 300); do xdotool search --onlyvisible --name '\((home as NSString).lastPathComponent)' >/dev/null 2>&1 && break; sleep 0.1; done
            sleep 1; kill $first; wait $first 2>/dev/null
            for attempt in 1 2 3; do
                \(command) '\(device.path(folder))' > '\(home)/manager-$attempt.log' 2>&1 &
                manager=$!
                for i in $(seq 1 300); do xdotool search --onlyvisible --name '\(folder)' >/dev/null 2>&1 && break; sleep 0.1; done
                for i in $(seq 1 300); do done_by_hand && break; sleep 0.1; done
                done_by_hand && break
                echo "attempt $attempt: the images by hand were not thumbnailed within 30 s"
                kill $manager; wait $manager 2>/dev/null
            done
            sleep 2  # only for the picture: the file manager draws what it has (nothing is checked on it)
            import -window root '\(shot)'
            kill $manager; wait $manager 2>/dev/null
            """
        let result = Shell.run(
            "dbus-run-session -- bash -c \(IndexerTestCase.quoted(script))", timeout: 240,
            environment: device.environment.merging([
                "DISPLAY": ":\(display)", "HOME": home, "GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1",
                "XDG_CONFIG_HOME": home + "/config", "XDG_DATA_HOME": home + "/data", "QT_QPA_PLATFORM": "xcb",
            ]) { $1 })
        if let folder = ProcessInfo.processInfo.environment["FOLIO_SCREENSHOTS"] {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: folder + "/\(name).png")
            try? FileManager.default.copyItem(atPath: shot, toPath: folder + "/\(name).png")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: shot), "no screenshot: \(result.stderr.suffix(2000))")
        if !result.stdout.isEmpty { print("\(name): \(result.stdout)") }

        return shot
    }

    private func checkNothingWithAThumbnailWasDownloaded(_ device: MountFixture, by manager: String) {
        XCTAssertEqual(state(device, "Pictures/byhand1.png"), "materialized", "\(manager) was at work: it thumbnailed the images by hand")
        XCTAssertEqual(state(device, "Pictures/byhand2.png"), "materialized", "\(manager)")
        for index in 1...6 {
            XCTAssertEqual(state(device, "Pictures/photo\(index).png"), "placeholder", "\(manager): photo\(index) has a thumbnail")
        }
        for name in ["holiday.mp4", "backup.iso", "notes.txt"] {
            XCTAssertNotEqual(state(device, "Pictures/\(name)"), "materialized", "\(manager) downloaded \(name) whole")
        }
    }

    func testNautilusShowsThumbnailsOfPlaceholdersWithoutDownloadingThem() throws {
        try writeDocuments()
        let device = try startViewingDevice(desktop: "GNOME")
        _ = try browse(device, "Pictures", with: "nautilus --new-window", name: "nautilus")
        checkNothingWithAThumbnailWasDownloaded(device, by: "Nautilus")
    }

    func testDolphinShowsThumbnailsOfPlaceholdersWithoutDownloadingThem() throws {
        try writeDocuments()
        let device = try startViewingDevice(desktop: "KDE")
        _ = try browse(device, "Pictures", with: "dolphin --new-window", name: "dolphin")
        checkNothingWithAThumbnailWasDownloaded(device, by: "Dolphin")
    }

    func testThunarAndTumblerShowThumbnailsOfPlaceholdersWithoutDownloadingThem() throws {
        try writeDocuments()
        let device = try startViewingDevice(desktop: "XFCE")
        _ = try browse(device, "Pictures", with: "thunar", name: "thunar")
        checkNothingWithAThumbnailWasDownloaded(device, by: "Thunar")
    }
}
