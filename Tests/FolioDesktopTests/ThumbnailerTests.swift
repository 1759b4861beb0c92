import FolioCore
@testable import FolioDesktop
import Foundation
import XCTest

/// Thumbnailer files as the desktop writes them, and runs of real thumbnailer processes within their limits.
final class ThumbnailerTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("thumbnailers-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root + "/share/thumbnailers", withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: root)
    }

    func testAThumbnailerFileIsReadAsTheDesktopReadsIt() throws {
        let thumbnailer = try XCTUnwrap(Thumbnailer(file: "x.thumbnailer", contents: """
            # a comment
            [Thumbnailer Entry]
            TryExec=/bin/sh
            Exec=/bin/sh -c "echo \\"%u\\" > %o" --size %s %i 100%%
            MimeType=image/x-one;image/x-two;

            [Other Section]
            Exec=/bin/false
            """))
        XCTAssertEqual(thumbnailer.types, ["image/x-one", "image/x-two"])
        XCTAssertEqual(
            thumbnailer.arguments(input: "/in put", inputURI: "file:///in%20put", output: "/out.png", size: 128),
            ["/bin/sh", "-c", "echo \"file:///in%20put\" > /out.png", "--size", "128", "/in put", "100%"])
    }

    func testAThumbnailerWhoseProgramIsMissingOrWithoutTypesIsIgnored() {
        XCTAssertNil(Thumbnailer(file: "x", contents: "[Thumbnailer Entry]\nTryExec=/nonexistent/tool\nExec=/nonexistent/tool %i %o\nMimeType=image/png;\n"))
        XCTAssertNil(Thumbnailer(file: "x", contents: "[Thumbnailer Entry]\nExec=/bin/true %i %o\n"))
        XCTAssertNil(Thumbnailer(file: "x", contents: "[Desktop Entry]\nExec=/bin/true\nMimeType=image/png;\n"))
    }

    func testTheMachinesThumbnailersAreFoundAndPickedByType() throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/usr/bin/gdk-pixbuf-thumbnailer"), "needs gdk-pixbuf-thumbnailer (Debian libgdk-pixbuf2.0-bin)")
        let installed = Thumbnailers.installed(environment: ["XDG_DATA_DIRS": "/usr/share", "HOME": root])
        XCTAssertEqual(installed.thumbnailer(for: "image/png")?.command.first, "/usr/bin/gdk-pixbuf-thumbnailer")
        XCTAssertNil(installed.thumbnailer(for: "text/plain"))
    }

    func testARealThumbnailerMakesAPNGOfTheAskedSize() async throws {
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/usr/bin/gdk-pixbuf-thumbnailer"), "needs gdk-pixbuf-thumbnailer (Debian libgdk-pixbuf2.0-bin)")
        let installed = Thumbnailers.installed(environment: ["XDG_DATA_DIRS": "/usr/share", "HOME": root])
        let thumbnailer = try XCTUnwrap(installed.thumbnailer(for: "image/png"))
        let image = root + "/wide.png"
        _ = FileManager.default.createFile(
            atPath: image, contents: Data(PNGEncoder.encode(width: 600, height: 300) { x, y in (UInt8(x & 255), UInt8(y & 255), 0) }))
        let png = try await XCTUnwrapAsync(await ThumbnailerRun().run(thumbnailer, input: image, size: 256, output: root + "/out.png"))
        XCTAssertEqual(Self.dimensions(of: png)?.width, 256)
        XCTAssertEqual(Self.dimensions(of: png)?.height, 128)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/out.png"), "the output is removed once read")
    }

    func testAThumbnailerThatFailsOrWritesNoImageMakesNone() async throws {
        let valid = try validPNG()
        let failing = try install("failing", script: "cp \(valid) \"$2\"; exit 3")
        let silent = try install("silent", script: "exit 0")
        let garbage = try install("garbage", script: "echo 'not a png at all' > \"$2\"")
        for thumbnailer in [failing, silent, garbage] {
            let png = await ThumbnailerRun().run(thumbnailer, input: "/etc/hostname", size: 128, output: root + "/out.png")
            XCTAssertNil(png, thumbnailer.file)
        }
    }

    func testAThumbnailerThatRunsTooLongIsKilledAtItsDeadline() async throws {
        let hanging = try install("hanging", script: "echo $$ > \(root)/pid; exec sleep 600")
        let started = ContinuousClock.now
        let png = await ThumbnailerRun(deadline: .milliseconds(500)).run(hanging, input: "/etc/hostname", size: 128, output: root + "/out.png")
        XCTAssertNil(png)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(60), "killed, not waited for")
        let pid = try XCTUnwrap(Int32(String(contentsOfFile: root + "/pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertNotEqual(kill(pid, 0), 0, "the thumbnailer is gone")
    }

    /// The describer's thumbnailers run while the daemon's other children (the replay helper, through Foundation's
    /// `Process`) start, and live long. Each run must come back with its child's outcome. Foundation's `Process`
    /// on Linux learns of a child's end when a socket only that child holds is closed; a long-lived child started
    /// at the same moment can inherit it (the mechanism of swift-corelibs-foundation issue 4795), and the run never
    /// came back: `ThumbnailMountTests` timed out 3 times in about 110 runs, a zombie thumbnailer beside the
    /// replay helper. With the thumbnailer run by Foundation's `Process`, this test failed 2 of 3 runs.
    func testThumbnailersEndWhileOtherChildrenStartAndEnd() async throws {
        let valid = try validPNG()
        let quick = try install("quick", script: "cp \(valid) \"$2\"")
        // Children that outlive any round's wait, started as fast as they can be (at most 300; every one is
        // killed at the end).
        let others = Task.detached { () -> [Process] in
            var sleepers: [Process] = []
            while !Task.isCancelled && sleepers.count < 300 {
                let sleeper = Process()
                sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
                sleeper.arguments = ["15"]
                try? sleeper.run()
                sleepers.append(sleeper)
            }
            return sleepers
        }
        for round in 0..<100 {
            let output = root + "/out-\(round).png"
            let outcome = await withTaskGroup(of: Bool?.self) { group -> Bool? in
                group.addTask { await ThumbnailerRun().run(quick, input: "/etc/hostname", size: 128, output: output) != nil }
                group.addTask {
                    try? await Task.sleep(for: .seconds(10))
                    return nil  // the run did not come back
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            XCTAssertEqual(outcome, true, "round \(round): \(outcome == nil ? "the run never came back" : "no thumbnail")")
            if outcome != true { break }
        }
        others.cancel()
        for sleeper in await others.value where sleeper.processIdentifier > 0 {
            kill(sleeper.processIdentifier, SIGKILL)
        }
    }

    func testAThumbnailerThatWantsTooMuchMemoryIsStopped() async throws {
        // Asks for 400 MiB, then writes its image: under a limit of 1 GiB of address space it makes one, under
        // 128 MiB it is stopped before.
        let valid = try validPNG()
        let greedy = try install("greedy", script: "python3 -c 'bytearray(400 << 20)' && cp \(valid) \"$2\"")
        let roomy = await ThumbnailerRun(memoryLimit: 1 << 30).run(greedy, input: "/etc/hostname", size: 128, output: root + "/out.png")
        XCTAssertNotNil(roomy)
        let png = await ThumbnailerRun(memoryLimit: 128 << 20).run(greedy, input: "/etc/hostname", size: 128, output: root + "/out.png")
        XCTAssertNil(png)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/out.png"))
    }

    /// A PNG file in the test's folder.
    private func validPNG() throws -> String {
        let path = root + "/valid.png"
        try Data(PNGEncoder.encode(width: 8, height: 8) { _, _ in (5, 5, 5) }).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A thumbnailer running `script` with `$1` the input path and `$2` the output.
    private func install(_ name: String, script: String) throws -> Thumbnailer {
        let program = "\(root)/\(name).sh"
        try "#!/bin/sh\n\(script)\n".write(toFile: program, atomically: true, encoding: .utf8)
        chmod(program, 0o755)
        return try XCTUnwrap(Thumbnailer(
            file: name, contents: "[Thumbnailer Entry]\nExec=\(program) %i %o\nMimeType=application/x-test;\n"))
    }

    static func dimensions(of png: [UInt8]) -> (width: Int, height: Int)? {
        guard let header = PNGText.chunks(of: png)?.first, header.type == "IHDR", header.data.count >= 8 else { return nil }
        let value = { (offset: Int) in header.data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (value(0), value(4))
    }
}

func XCTUnwrapAsync<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    try XCTUnwrap(value, file: file, line: line)
}
