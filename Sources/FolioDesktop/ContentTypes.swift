import CGIO

/// Types as the desktop decides them: GLib's shared-mime-info lookup (the file name's globs, then the magic of
/// the first bytes), the same GIO, Nautilus and the GTK file chooser use, so Folio's answer for a placeholder is
/// the one they would have reached by reading it.
public enum ContentTypes {
    /// How much of the start of a file the guess reads (shared-mime-info's magic looks at the first few KiB).
    public static let sampleSize = 64 * 1024

    /// The type of a file named `name` that starts with `sample`; `nil` when neither the name nor the bytes say
    /// anything (GIO's `application/octet-stream` for unknown bytes, `text/plain` for unknown text, is kept).
    public static func guess(name: String, sample: [UInt8]) -> String? {
        var uncertain: gboolean = 0
        let guessed: UnsafeMutablePointer<gchar>? = sample.withUnsafeBufferPointer { bytes in
            name.withCString { name in
                g_content_type_guess(name, bytes.baseAddress, gsize(bytes.count), &uncertain)
            }
        }
        guard let guessed else { return nil }
        defer { g_free(guessed) }
        let type = String(cString: guessed)
        return type.isEmpty ? nil : type
    }

    /// The type the name alone gives, when shared-mime-info is sure of it (a glob that matches one type, as
    /// `notes.txt` or `photo.png`); `nil` for a name that says nothing or is ambiguous.
    public static func typeOfName(_ name: String) -> String? {
        var uncertain: gboolean = 0
        guard let guessed = name.withCString({ g_content_type_guess($0, nil, 0, &uncertain) }) else { return nil }
        defer { g_free(guessed) }
        let type = String(cString: guessed)
        return uncertain == 0 && !type.isEmpty ? type : nil
    }

    /// Whether `type` is `supertype` or a kind of it (an alias, or a subclass in shared-mime-info).
    public static func type(_ type: String, isA supertype: String) -> Bool {
        g_content_type_is_a(type, supertype) != 0
    }
}
