/// What `lseek` looks for in a sparse file.
public enum SeekTarget: Sendable {
    /// The next byte of data (`SEEK_DATA`).
    case data
    /// The next hole; the end of the file counts as one (`SEEK_HOLE`).
    case hole
}
