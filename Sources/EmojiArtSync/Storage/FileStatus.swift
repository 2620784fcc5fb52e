#if canImport(Glibc)
import Glibc
#endif

/// What `fstatat(2)` (never following a symbolic link) says is at a path: the one status call of the agent's
/// decisions about files in DIR, and the views they read of it: the ``fingerprint`` (is it still the file the
/// index recorded?), the ``occupant`` (may the agent write there?) and the ``identity`` (whose file is it?).
///
/// ``at(_:relativeTo:)`` answers nil only for "nothing there" (`ENOENT`, `ENOTDIR`); any other failure (`EACCES`,
/// `EIO`, `ENOMEM`...) is thrown, never read as "absent" or "something else is there": a decision made from
/// it (repair, release, remove) would be wrong. ``PathStatus`` adds the agent's test hooks in front of it.
struct FileStatus: Sendable {
    /// The kernel's answer.
    let info: stat

    init(_ info: stat) {
        self.info = info
    }

    /// The status of `path` (relative to the directory `directory` when it is not absolute), nil when nothing
    /// is there. Throws any other failure, naming `fstatat`, the errno and the path.
    static func at(_ path: String, relativeTo directory: Int32 = AT_FDCWD) throws(SyncError) -> FileStatus? {
        var info = stat()
        do {
            _ = try retryingInterrupts { fstatat(directory, path, &info, AT_SYMLINK_NOFOLLOW) }
        } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR { return nil }
            throw failure(of: path, errno: error.errno)
        }
        return FileStatus(info)
    }

    /// The error of a status call on `path` that failed with `code`.
    static func failure(of path: String, errno code: Int32) -> SyncError {
        SyncError.system("fstatat", path: path, errno: code, hint: "cannot tell what is at the path; left as it is")
    }

    /// The fingerprint of a regular file; nil for anything else (a link, a directory, a FIFO...).
    var fingerprint: FileFingerprint? { FileFingerprint(regular: info) }

    /// Which file this is, whatever its kind.
    var identity: FileIdentity { FileIdentity(info) }

    /// What occupies the path, for the agent's write-or-refuse decision.
    var occupant: PathOccupant { PathOccupant(info) }

    /// Names of the inode (`st_nlink`).
    var links: Int { Int(info.st_nlink) }
}
