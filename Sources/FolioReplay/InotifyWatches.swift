import Foundation
import Glibc

/// The inodes of one filesystem that inotify watches, read from `/proc`: every process's descriptors that are
/// inotify instances (`anon_inode:inotify`), and the watches their `fdinfo` lists (`inotify wd:… ino:… sdev:…`,
/// both in hex; `sdev` is the kernel's device number, `major << 20 | minor`).
///
/// A replay is an event for whoever watches the folder (or the item) it happens in; where nobody does, it is work
/// nobody sees. A scan costs one `readlink` per descriptor of every process, so it is made for bursts only (a
/// folder's first listing of thousands of new files). It answers `nil`, "anyone may be watching", when it cannot
/// tell: `fanotify` in use (its marks can cover a whole mount), a process whose descriptors it may not read on a
/// mount others may use, or no `/proc`.
struct InotifyWatches: Equatable {
    /// The watched inode numbers on the device.
    var inodes: Set<UInt64>

    /// The watches on the filesystem of device `major:minor` (as `/proc/self/mountinfo` writes it), of every
    /// process under `proc`. `othersMayUse`: the mount lets other users in (`allow_other`), so a process this one
    /// may not look into could be watching it.
    static func scan(device: String, othersMayUse: Bool, proc: String = "/proc") -> InotifyWatches? {
        let parts = device.split(separator: ":")
        guard parts.count == 2, let major = UInt64(parts[0]), let minor = UInt64(parts[1]) else { return nil }
        let kernelDevice = String(major << 20 | minor, radix: 16)
        guard let processes = try? FileManager.default.contentsOfDirectory(atPath: proc) else { return nil }
        var inodes: Set<UInt64> = []
        for process in processes where process.first?.isNumber == true {
            let descriptors: [String]
            do {
                descriptors = try FileManager.default.contentsOfDirectory(atPath: "\(proc)/\(process)/fd")
            } catch {
                // Gone meanwhile, or not ours to read: another user's, who may use the mount only with allow_other.
                if othersMayUse, FileManager.default.fileExists(atPath: "\(proc)/\(process)") { return nil }
                continue
            }
            for descriptor in descriptors {
                switch kind(of: "\(proc)/\(process)/fd/\(descriptor)") {
                case .inotify:
                    let info = "\(proc)/\(process)/fdinfo/\(descriptor)"
                    guard let text = try? String(contentsOfFile: info, encoding: .utf8) else { continue }
                    inodes.formUnion(watchedInodes(inFDInfo: text, device: kernelDevice))
                case .fanotify:
                    return nil
                case .other:
                    continue
                }
            }
        }
        return InotifyWatches(inodes: inodes)
    }

    /// The inode numbers an inotify instance's `fdinfo` text lists on the device `device` (hex, as it writes it).
    static func watchedInodes(inFDInfo text: String, device: String) -> Set<UInt64> {
        var inodes: Set<UInt64> = []
        for line in text.split(separator: "\n") where line.hasPrefix("inotify ") {
            var inode: UInt64?
            var onDevice = false
            for field in line.split(separator: " ") {
                if field.hasPrefix("ino:") { inode = UInt64(field.dropFirst(4), radix: 16) }
                if field.hasPrefix("sdev:") { onDevice = field.dropFirst(5) == device }
            }
            if onDevice, let inode { inodes.insert(inode) }
        }
        return inodes
    }

    private enum Kind { case inotify, fanotify, other }

    /// What the descriptor at `path` (`/proc/PID/fd/N`) is, from its link.
    private static func kind(of path: String) -> Kind {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return .other }
        let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch target {
        case "anon_inode:inotify": return .inotify
        case "anon_inode:[fanotify]": return .fanotify
        default: return .other
        }
    }
}
