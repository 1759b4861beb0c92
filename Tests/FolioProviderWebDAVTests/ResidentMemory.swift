import Foundation

/// This process's resident memory, from `/proc/self/status`, for tests that must show a big body never sits in
/// memory.
enum ResidentMemory {
    /// A reading of `/proc/self/status` failed.
    struct Unreadable: Error {}

    /// Resets the kernel's peak resident size (`VmHWM`) to the current size and returns it, in bytes.
    static func resetPeak() throws -> Int {
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        return try field("VmHWM")
    }

    /// The peak resident size since the last ``resetPeak()``, in bytes.
    static func peak() throws -> Int { try field("VmHWM") }

    private static func field(_ name: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
            let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
        else { throw Unreadable() }
        return kilobytes * 1024
    }
}
