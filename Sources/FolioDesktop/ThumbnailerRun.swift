import Foundation

/// Runs a thumbnailer on content that is here, never on a placeholder (it is given the file in Folio's content
/// cache, not a path in the mount), within limits: its address space and CPU time through `prlimit`, its
/// running time by a deadline after which it is killed. A thumbnailer that fails, is killed, or writes no PNG
/// made no thumbnail.
public struct ThumbnailerRun: Sendable {
    /// The address space a thumbnailer may use.
    public var memoryLimit: Int = 512 << 20
    /// The CPU seconds it may use.
    public var cpuSeconds: Int = 20
    /// How long it may run.
    public var deadline: Duration = .seconds(30)

    /// Limits as given.
    public init(memoryLimit: Int = 512 << 20, cpuSeconds: Int = 20, deadline: Duration = .seconds(30)) {
        self.memoryLimit = memoryLimit
        self.cpuSeconds = cpuSeconds
        self.deadline = deadline
    }

    /// The PNG `thumbnailer` makes of `input` at `size` pixels, written through `output` (removed after); `nil`
    /// if it made none.
    public func run(_ thumbnailer: Thumbnailer, input: String, size: Int, output: String) async -> [UInt8]? {
        guard let inputURI = ThumbnailCache.uri(ofPath: input) else { return nil }
        unlink(output)
        defer { unlink(output) }
        let command = ["/usr/bin/prlimit", "--as=\(memoryLimit)", "--cpu=\(cpuSeconds)", "--"]
            + thumbnailer.arguments(input: input, inputURI: inputURI, output: output, size: size)
        let status = await ChildProcess.run(command, deadline: deadline)
        guard status == 0, let data = FileManager.default.contents(atPath: output), data.count > 8 else { return nil }
        let png = [UInt8](data)
        return PNGText.chunks(of: png) != nil ? png : nil
    }
}
