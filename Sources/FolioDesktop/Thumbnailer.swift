import Foundation

/// One freedesktop thumbnailer: a `*.thumbnailer` file of `thumbnailers/` in a data folder (`TryExec`, `Exec`
/// with `%i`/`%u` for the input path/URI, `%o` for the output PNG, `%s` for the size, and the `MimeType` list it
/// handles), as GNOME's thumbnail factory and tumbler read them.
public struct Thumbnailer: Hashable, Sendable {
    /// The file it was read from.
    public var file: String
    /// The command line, split into arguments, `%` codes still in them.
    public var command: [String]
    /// The types it handles.
    public var types: [String]

    /// Reads a `.thumbnailer` file; `nil` if it is not one, or its program is missing (`TryExec`).
    public init?(file: String, contents: String) {
        var section = ""
        var values: [String: String] = [:]
        for line in contents.split(whereSeparator: \.isNewline) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("#") || text.isEmpty { continue }
            if text.hasPrefix("[") {
                section = text
                continue
            }
            guard section == "[Thumbnailer Entry]", let equals = text.firstIndex(of: "=") else { continue }
            values[text[..<equals].trimmingCharacters(in: .whitespaces)] =
                text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        guard let exec = values["Exec"], let types = values["MimeType"] else { return nil }
        let command = Self.arguments(of: exec)
        guard let program = values["TryExec"] ?? command.first, Self.isExecutable(program) else { return nil }
        self.file = file
        self.command = command
        self.types = types.split(separator: ";").map(String.init).filter { !$0.isEmpty }
    }

    /// The arguments of an `Exec` value: split at spaces, double quotes group (with `\` escaping in them).
    static func arguments(of exec: String) -> [String] {
        var arguments: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        var started = false
        for character in exec {
            if escaped {
                current.append(character)
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
                started = true
            } else if character == " " && !quoted {
                if started { arguments.append(current) }
                current = ""
                started = false
            } else {
                current.append(character)
                started = true
            }
        }
        if started { arguments.append(current) }
        return arguments
    }

    /// The command line for one run: `%i`, `%u`, `%o`, `%s` and `%%` replaced.
    public func arguments(input: String, inputURI: String, output: String, size: Int) -> [String] {
        command.map { argument in
            var result = ""
            var percent = false
            for character in argument {
                if percent {
                    switch character {
                    case "i": result += input
                    case "u": result += inputURI
                    case "o": result += output
                    case "s": result += String(size)
                    case "%": result += "%"
                    default: break
                    }
                    percent = false
                } else if character == "%" {
                    percent = true
                } else {
                    result.append(character)
                }
            }
            return result
        }
    }

    private static func isExecutable(_ program: String) -> Bool {
        if program.hasPrefix("/") { return access(program, X_OK) == 0 }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }
}

/// The thumbnailers installed on this machine.
public struct Thumbnailers: Sendable {
    /// Every usable thumbnailer, the first data folder's first.
    public var all: [Thumbnailer]

    /// The thumbnailers of `$XDG_DATA_HOME` and `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`).
    public static func installed(environment: [String: String] = ProcessInfo.processInfo.environment) -> Thumbnailers {
        var folders: [String] = []
        if let home = environment["XDG_DATA_HOME"] ?? environment["HOME"].map({ $0 + "/.local/share" }) {
            folders.append(home)
        }
        let system = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        folders += system.split(separator: ":").map(String.init)
        var all: [Thumbnailer] = []
        var seen: Set<String> = []
        for folder in folders {
            let directory = folder + "/thumbnailers"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names.sorted() where name.hasSuffix(".thumbnailer") && seen.insert(name).inserted {
                let file = directory + "/" + name
                guard let contents = try? String(contentsOfFile: file, encoding: .utf8),
                    let thumbnailer = Thumbnailer(file: file, contents: contents)
                else { continue }
                all.append(thumbnailer)
            }
        }
        return Thumbnailers(all: all)
    }

    /// The thumbnailer for `type`: one that names it, else one that names a type it is a kind of.
    public func thumbnailer(for type: String) -> Thumbnailer? {
        all.first { $0.types.contains(type) }
            ?? all.first { $0.types.contains { ContentTypes.type(type, isA: $0) } }
    }
}
