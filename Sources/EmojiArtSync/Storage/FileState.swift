#if canImport(Glibc)
import Glibc
#endif

/// What sits at a path, as `lstat(2)` sees it (symbolic links are never followed).
public enum FileState: Sendable, Equatable {
    case absent
    case regular(size: Int)
    case symbolicLink
    /// A directory, FIFO, socket or device: never ours, never touched.
    case other

    /// `lstat(2)` on `path`. Errors other than ENOENT/ENOTDIR read as `.other`, so the caller leaves the path alone.
    /// (Ownership decisions use `PathStatus`, which throws such an error instead.)
    public static func of(_ path: String) -> FileState {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return errno == ENOENT || errno == ENOTDIR ? .absent : .other
        }
        return FileState(info)
    }

    /// What a status says is there; nil: nothing.
    init(_ status: stat?) {
        guard let info = status else {
            self = .absent
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: self = .regular(size: Int(info.st_size))
        case S_IFLNK: self = .symbolicLink
        default: self = .other
        }
    }
}
