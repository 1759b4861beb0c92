import Foundation
import XCTest

/// A second local user for the tests of the boundary between users: `folio-other`, made once (`useradd`, so the
/// tests need root), whose commands run with its user and group ids only (`setpriv`).
enum OtherUser {
    /// The user's name.
    static let name = "folio-other"

    /// Makes the user if it is missing and returns its user and group ids.
    static func ensure(file: StaticString = #filePath, line: UInt = #line) throws -> (uid: UInt32, gid: UInt32) {
        // Idempotent, also against a test process doing the same at once: whoever loses the race finds the user.
        let result = Shell.run(
            "id -u \(name) >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin \(name) "
                + "2>/dev/null; echo \"$(id -u \(name)) $(id -g \(name))\"", file: file, line: line)
        let ids = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { UInt32($0) }
        guard ids.count == 2 else {
            XCTFail(
                "cannot make the user \(name) (useradd from passwd needed): \(result.stderr)", file: file, line: line)
            throw OtherUserError.unavailable
        }
        return (ids[0], ids[1])
    }

    /// Runs `bash -c script` as the other user, with `XDG_RUNTIME_DIR` set to `runtime` (a folder of its own).
    @discardableResult
    static func run(
        _ script: String, runtime: String, timeout: TimeInterval = 60, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> CommandResult {
        let (uid, gid) = try ensure(file: file, line: line)
        return Shell.run(
            "setpriv --reuid=\(uid) --regid=\(gid) --clear-groups env HOME=/ PATH=/usr/sbin:/usr/bin:/sbin:/bin "
                + "XDG_RUNTIME_DIR='\(runtime)' bash -c \"$FOLIO_OTHER_SCRIPT\"",
            timeout: timeout, environment: ["FOLIO_OTHER_SCRIPT": script], file: file, line: line)
    }

    enum OtherUserError: Error { case unavailable }
}
