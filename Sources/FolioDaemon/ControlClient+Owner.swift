import FolioCore
import Foundation

extension ControlClient {
    /// Why `path` has no Folio daemon this user can ask: inside another user's Folio mount (named from the mount
    /// table: its FUSE `user_id=`), or not inside a running Folio mount at all.
    public static func notControllableMessage(for path: String) -> String {
        guard let (mountpoint, owner) = folioMount(containing: RuntimePaths.canonical(path)) else {
            return "\(path) is not inside a running Folio mount"
        }
        guard owner != geteuid() else {
            do {
                _ = try RuntimePaths.privateRuntimeDirectory(creating: false)
            } catch .accessDenied(let reason) {
                return reason
            } catch {}
            return "\(path) is inside the Folio mount at \(mountpoint), but its daemon does not answer (no control "
                + "socket in \(RuntimePaths.runtimeDirectory)); was it started with another XDG_RUNTIME_DIR?"
        }
        return "\(path) is inside the Folio mount at \(mountpoint), which belongs to \(RuntimePaths.userName(owner)): "
            + "only its owner (or root) can control it"
    }

    /// The innermost Folio mount (`fuse.folio` in `/proc/self/mountinfo`) whose mountpoint contains `path`, with
    /// the user id it was mounted by.
    static func folioMount(containing path: String) -> (mountpoint: String, owner: uid_t)? {
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        var found: (mountpoint: String, owner: uid_t)?
        for line in table.split(separator: "\n") {
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2 else { continue }
            let fields = halves[0].split(separator: " ")
            let tail = halves[1].split(separator: " ")
            guard fields.count > 4, tail.count > 2, tail[0] == "fuse.folio" else { continue }
            let mountpoint = unescape(String(fields[4]))
            let inside = path == mountpoint || path.hasPrefix(mountpoint == "/" ? "/" : mountpoint + "/")
            guard inside, mountpoint.count >= (found?.mountpoint.count ?? 0) else { continue }
            let option = tail[2].split(separator: ",").first { $0.hasPrefix("user_id=") }
            guard let owner = option.flatMap({ uid_t($0.dropFirst("user_id=".count)) }) else { continue }
            found = (mountpoint, owner)
        }
        return found
    }

    /// The mountpoints of every Folio mount this process can see (`fuse.folio` in `/proc/self/mountinfo`).
    public static func folioMountpoints() -> [String] {
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").compactMap { line in
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2, halves[1].hasPrefix("fuse.folio ") else { return nil }
            let fields = halves[0].split(separator: " ")
            return fields.count > 4 ? unescape(String(fields[4])) : nil
        }
    }

    /// A mount table field with its octal escapes (`\040` for a space) decoded.
    private static func unescape(_ field: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
               let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
