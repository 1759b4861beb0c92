/// Words of the messages Folio shows its users.
public enum Wording {
    /// A count with its noun in the number it takes: `1 file`, `2 files`, `0 files`.
    public static func count(_ count: Int, _ singular: String, plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }
}
