import ArgumentParser
import FolioDaemon
import Foundation

/// `folio export PATH DEST-FOLDER`: the document picker's export mode.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Copy a document out to another container's folder, or to a folder outside the mount, with its tags.",
        discussion: """
            The copy (bytes, mode, modification time and user.xdg.tags) is written under a temporary name, synced \
            and renamed into DEST-FOLDER, so a reader there never sees half of it; in a Folio mount it is a new \
            document, uploaded. The document itself is left as it is (downloaded first if it is a placeholder). \
            A name DEST-FOLDER has is refused.
            """)

    @Argument(help: "The document, a path inside a Folio mount.")
    var path: String

    @Argument(help: "The folder to copy it into (another container's, or any folder).")
    var destination: String

    func run() throws {
        guard ControlClient.mountpoint(containing: path) != nil else {
            throw CLIError(ControlClient.notControllableMessage(for: path))
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw CLIError("\(path): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw CLIError("only documents can be exported; \(path) is not one") }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: destination, isDirectory: &isFolder), isFolder.boolValue else {
            throw CLIError("\(destination) is not a folder")
        }
        let name = (path as NSString).lastPathComponent
        let target = (destination as NSString).appendingPathComponent(name)
        guard !FileManager.default.fileExists(atPath: target) else {
            throw CLIError("\(target) exists: nothing was copied")
        }
        let temporary = (destination as NSString).appendingPathComponent(".\(name).folio-export-\(getpid())")
        do {
            try copy(from: path, to: temporary, mode: info.st_mode & 0o777, modified: info.st_mtim)
            if let failure = ExclusiveRename.rename(temporary, to: target) {
                let reason = failure == EEXIST ? "it exists" : String(cString: strerror(failure))
                throw CLIError("\(target): \(reason) (nothing was copied)")
            }
        } catch {
            unlink(temporary)
            if let failure = error as? CLIError { throw failure }
            throw CLIError("\(error)")
        }
        print("exported \(path) to \(target)")
    }

    /// Copies the bytes, tags, mode and time of `source` into a new file `target`, synced.
    private func copy(from source: String, to target: String, mode: mode_t, modified: timespec) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw CLIError("\(source): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard output >= 0 else { throw CLIError("\(target): \(String(cString: strerror(errno)))") }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = read(input, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw CLIError("reading \(source): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            var done = 0
            while done < count {
                let written = buffer.withUnsafeBytes { write(output, $0.baseAddress! + done, count - done) }
                guard written > 0 else { throw CLIError("writing \(target): \(String(cString: strerror(errno)))") }
                done += written
            }
        }
        if let tags = FileTags.read(input), let failure = FileTags.write(output, tags) {
            throw CLIError("\(destination) cannot keep the tags (user.xdg.tags: \(String(cString: strerror(failure))))")
        }
        var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), modified]  // (UTIME_OMIT: the access time as it is)
        futimens(output, &times)
        guard fsync(output) == 0 else { throw CLIError("syncing \(target): \(String(cString: strerror(errno)))") }
    }
}
