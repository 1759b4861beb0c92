import FolioCore
import Foundation
import SystemPackage

/// The demo remote: three containers with documents, folders, images, a symlink and one large file, so a fresh
/// mount has something to list, open, materialize and watch progress on.
///
/// - Drive (public): `README.md`, `Projects/2026/plan.md`, `Projects/2026/budget.csv`,
///   `Projects/current-plan.md` (a symlink), `Documents/letter.txt`, `Pictures/` (PNG and SVG images) and
///   ``largeFilePath`` of ``defaultLargeFileSize`` bytes;
/// - Notes, `com.example.notes` (public): notes in nested folders and a sketch;
/// - Secret, `com.example.secret` (private): a diary.
public enum SampleRemote {
    /// The size of the large sample file unless told otherwise: 64 MiB.
    public static let defaultLargeFileSize: Int64 = 64 << 20

    /// The Notes container.
    public static let notes = Container(id: ContainerID("com.example.notes"), displayName: "Notes", isPublic: true)

    /// The private Secret container.
    public static let secret = Container(id: ContainerID("com.example.secret"), displayName: "Secret", isPublic: false)

    /// Where the large file is, relative to the Drive container.
    public static let largeFilePath = "Media/field-recording.raw"

    /// Fills `root` with the sample remote, making it a remote first if it is not one (a non-empty directory
    /// that is not a remote is refused). Does nothing if `root` already holds the sample (its marker is in
    /// `.folio/`); files already present are left as they are. Every item gets its id.
    public static func create(at root: FilePath, largeFileSize: Int64 = defaultLargeFileSize) throws {
        let layout = RemoteLayout(root: root)
        if try SystemCalls.statusIfPresent(layout.sampleMarker) != nil { return }
        try LocalProvider.initialize(at: root)
        try LocalProvider.addContainer(notes, at: root)
        try LocalProvider.addContainer(secret, at: root)

        let drive = layout.directory(of: .drive)
        for (path, text) in driveDocuments { try writeIfAbsent(Array(text.utf8), to: drive, path) }
        try writeIfAbsent(gradientImage, to: drive, "Pictures/sunrise-gradient.png")
        try writeIfAbsent(checkerboardImage, to: drive, "Pictures/checkerboard.png")
        try writeIfAbsent(Array(logoSVG.utf8), to: drive, "Pictures/folio-logo.svg")
        if try SystemCalls.statusIfPresent(drive.appending("Projects/current-plan.md")) == nil {
            try SystemCalls.makeSymlink(at: drive.appending("Projects/current-plan.md"), target: "2026/plan.md")
        }
        try writeLargeFileIfAbsent(drive.appending(largeFilePath), size: largeFileSize)

        let notesDirectory = layout.directory(of: notes.id)
        for (path, text) in noteDocuments { try writeIfAbsent(Array(text.utf8), to: notesDirectory, path) }
        try writeIfAbsent(sunsetImage, to: notesDirectory, "Sketches/sunset.png")

        let secretDirectory = layout.directory(of: secret.id)
        for (path, text) in secretDocuments { try writeIfAbsent(Array(text.utf8), to: secretDirectory, path) }

        try SharedRemoteTree.forRemote(at: layout).withLock { tree in
            for container in [Container.drive, notes, secret] { _ = try tree.scan(container.id) }
        }
        try AtomicFile.write(Data("sample remote\n".utf8), to: layout.sampleMarker)
    }

    // MARK: Writing

    /// Writes `bytes` to `base/relativePath` (making folders) unless something is there.
    private static func writeIfAbsent(_ bytes: [UInt8], to base: FilePath, _ relativePath: String) throws {
        let path = base.appending(relativePath)
        guard try SystemCalls.statusIfPresent(path) == nil else { return }
        var folder = path
        folder.removeLastComponent()
        try SystemCalls.makeDirectories(folder)
        try writeNew(path) { descriptor in _ = try bytes.withUnsafeBytes { try descriptor.writeAll($0) } }
    }

    /// Writes `size` bytes of patterned pseudo-random content in 1 MiB chunks (each chunk differs), unless
    /// something is there.
    private static func writeLargeFileIfAbsent(_ path: FilePath, size: Int64) throws {
        guard try SystemCalls.statusIfPresent(path) == nil else { return }
        var folder = path
        folder.removeLastComponent()
        try SystemCalls.makeDirectories(folder)
        var random = SplitMix64(seed: 0xF011_0F11_E5)
        var chunk = [UInt8](repeating: 0, count: ContentCopier.fullSpeedChunkSize)
        chunk.withUnsafeMutableBytes { bytes in
            for offset in stride(from: 0, to: bytes.count, by: 8) {
                bytes.storeBytes(of: random.next(), toByteOffset: offset, as: UInt64.self)
            }
        }
        try writeNew(path) { descriptor in
            var written: Int64 = 0
            var chunkNumber: UInt64 = 0
            while written < size {
                chunk.withUnsafeMutableBytes { $0.storeBytes(of: chunkNumber.bigEndian, as: UInt64.self) }
                let count = Int(min(Int64(chunk.count), size - written))
                _ = try chunk.withUnsafeBytes {
                    try descriptor.writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<count]))
                }
                written += Int64(count)
                chunkNumber += 1
            }
        }
    }

    /// Creates a new file and lets `body` fill it.
    private static func writeNew(_ path: FilePath, _ body: (FileDescriptor) throws -> Void) throws {
        do {
            let descriptor = try FileDescriptor.open(
                path, .writeOnly, options: [.create, .exclusiveCreate],
                permissions: [.ownerReadWrite, .groupRead, .otherRead]
            )
            try descriptor.closeAfter { try body(descriptor) }
        } catch let error as Errno {
            throw FolioError.system(error, "write sample file \(path)")
        }
    }

    // MARK: Content

    /// Text documents of the Drive container.
    private static let driveDocuments: [(String, String)] = [
        ("README.md", """
            # Welcome to Folio

            This is the Drive: your documents, kept by a provider and shown here as ordinary files.
            Files you have not opened yet are placeholders: they list and stat like any file, and their content
            is downloaded the first time you open one. Try `getfattr -d -m user.folio` on a file to see its state.

            - `Projects/` holds plans, `Documents/` letters, `Pictures/` images.
            - `Media/field-recording.raw` is large: open it and watch `user.folio.progress`.
            """),
        ("Projects/2026/plan.md", """
            # Plan for 2026

            1. Ship the document filesystem.
            2. Keep every version: nothing is ever silently lost.
            3. Make placeholders feel exactly like files.
            """),
        ("Projects/2026/budget.csv", """
            quarter,item,amount
            Q1,servers,1200
            Q2,design,800
            Q3,conference,1500
            Q4,reserve,500
            """),
        ("Projects/Archive/2025-retrospective.md", """
            # 2025 retrospective

            What went well: the prototype mounted on the first try.
            What to change: write the semantics down before the code.
            """),
        ("Documents/letter.txt", """
            Dear reader,

            This letter lives on a remote and was downloaded when you opened it.

            Kind regards,
            Folio
            """),
    ]

    /// Text documents of the Notes container.
    private static let noteDocuments: [(String, String)] = [
        ("Welcome.md", "# Notes\n\nAn app container: the Notes app keeps its documents here.\n"),
        ("Journal/2026/01-15.md", "# 15 January\n\nStarted a journal in Folio.\n"),
        ("Journal/2026/02-03.md", "# 3 February\n\nRenamed a folder; every note kept its id.\n"),
        ("Recipes/pancakes.md", "# Pancakes\n\n- 2 eggs\n- 250 ml milk\n- 125 g flour\n"),
    ]

    /// Text documents of the Secret container.
    private static let secretDocuments: [(String, String)] = [
        ("diary.md", "# Private diary\n\nThis container is private: only its own app view shows it.\n"),
        ("Keys/not-a-real-key.txt", "There is nothing secret in this sample.\n"),
    ]

    /// A scalable logo.
    private static let logoSVG = """
        <svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128">
          <rect x="16" y="8" width="96" height="112" rx="10" fill="#f4f1e8" stroke="#3a5a8c" stroke-width="6"/>
          <path d="M36 40 H92 M36 60 H92 M36 80 H72" stroke="#3a5a8c" stroke-width="6" stroke-linecap="round"/>
        </svg>

        """

    /// A sunrise-colored gradient.
    private static var gradientImage: [UInt8] {
        PNGEncoder.encode(width: 96, height: 64) { x, y in
            (UInt8(255 - y * 2), UInt8(80 + x), UInt8(60 + y * 2))
        }
    }

    /// A black and white checkerboard.
    private static var checkerboardImage: [UInt8] {
        PNGEncoder.encode(width: 64, height: 64) { x, y in
            (x / 8 + y / 8) % 2 == 0 ? (20, 20, 20) : (235, 235, 235)
        }
    }

    /// A sun setting over the sea.
    private static var sunsetImage: [UInt8] {
        PNGEncoder.encode(width: 80, height: 60) { x, y in
            let dx = x - 40
            let dy = y - 34
            if y > 36 { return (20, 40, UInt8(120 + (y - 36) * 4)) }
            if dx * dx + dy * dy < 144 { return (250, 190, 60) }
            return (UInt8(200 + y), UInt8(90 + y * 2), 110)
        }
    }
}
