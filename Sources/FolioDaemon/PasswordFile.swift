import FolioCore
import Foundation

/// Where the password of a WebDAV account comes from: a private file (`--password-file`) or the environment
/// (``environmentVariable``), never the command line, where `ps` would show it to every user.
public enum PasswordFile {
    /// The environment variable a password may come from instead of a file.
    public static let environmentVariable = "FOLIO_WEBDAV_PASSWORD"

    /// The password in the file at `path`: its first line. The file must be a regular file of the caller's,
    /// readable by its owner and by nobody else (mode 0600 or 0400); anything else is refused with what to do.
    public static func read(_ path: String) throws(FolioError) -> String {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw .accessDenied("cannot read the password file \(path): \(reason)")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw .invalidArgument("the password file \(path) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw .accessDenied(
                "the password file \(path) belongs to another user (uid \(info.st_uid)): use a file of your own, "
                    + "private to you (chmod 600 \(path))")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0, mode & 0o400 != 0 else {
            throw .accessDenied(
                "the password file \(path) has mode \(String(mode, radix: 8)): it must be readable by you "
                    + "and nobody else; fix it with `chmod 600 \(path)`")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 1 << 16 {
            let count = Foundation.read(descriptor, &buffer, buffer.count)
            guard count >= 0 else {
                throw .io("cannot read the password file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let password = String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        guard !password.isEmpty else { throw .invalidArgument("the password file \(path) is empty") }
        return password
    }
}
