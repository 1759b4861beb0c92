import CFUSE
import Foundation
import Glibc
import SystemPackage

/// The replay helper: a small process the daemon starts (`folio replay-helper MOUNTPOINT DEVICE`) to make the
/// system calls that replay remote changes on the mount (see ``ChangeReplayer``).
///
/// A process of its own, not a thread of the daemon: a request to a FUSE mount that its server has read but not
/// answered can only end with an answer or with the connection. A daemon thread waiting in such a request (the
/// daemon killed with `kill -9`, or its loop ending mid-replay) would keep the daemon from ever exiting, and so
/// its `/dev/fuse` descriptor open and the connection alive: a process that can never die. The helper, instead,
/// is freed when the daemon's death closes the connection, and ends when its input does (the daemon's end of
/// the pipe closes when the daemon exits, however it exits).
public enum ReplayHelper {
    /// Serves operations from standard input (one JSON ``ReplayOperation`` per line), answering each with a
    /// line holding 0 or an errno, until standard input ends. Each operation runs relative to a fresh
    /// descriptor of `mountpoint`, and only if that is still the mount with `device` (`major:minor`): after a
    /// lazy unmount the path leads to the folder underneath, which a replay must never touch.
    public static func serve(mountpoint: String, device: String) -> Int32 {
        // Nothing of the daemon's stays open here (a control socket, the remote's watch).
        _ = cfuse_close_from(3)
        let decoder = JSONDecoder()
        while let line = readLine() {
            let error: Errno?
            if let operation = try? decoder.decode(ReplayOperation.self, from: Data(line.utf8)) {
                error = perform(operation, mountpoint: mountpoint, device: device)
            } else {
                error = .invalidArgument
            }
            let answer = Array(ReplayAnswer.line(for: error).utf8)
            guard write(STDOUT_FILENO, answer, answer.count) == answer.count else { return 1 }
        }
        return 0
    }

    private static func perform(_ operation: ReplayOperation, mountpoint: String, device: String) -> Errno? {
        let root = open(mountpoint, cfuse_o_path | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return Errno(rawValue: errno) }
        defer { close(root) }
        var status = stat()
        guard fstat(root, &status) == 0 else { return Errno(rawValue: errno) }
        guard deviceName(status.st_dev) == device else { return .socketNotConnected }
        return operation.perform(in: root)
    }

    /// `major:minor` of a device number, as `/proc/self/mountinfo` writes it (glibc's encoding).
    static func deviceName(_ device: UInt) -> String {
        let value = UInt64(device)
        let major = ((value >> 8) & 0xfff) | ((value >> 32) & 0xffff_f000)
        let minor = (value & 0xff) | ((value >> 12) & 0xffff_ff00)
        return "\(major):\(minor)"
    }
}
