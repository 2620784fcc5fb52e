import CShims

#if canImport(Glibc)
import Glibc
#endif

/// What `fstatat(2)` (never following a symbolic link) says is at a path, with the inode's birth time (made through
/// `statx(2)`: `emojiart_status_at`): the one status call of the agent's decisions about files in DIR, and the views
/// they read of it: the ``fingerprint`` (is it still the file the index recorded?), the ``occupant`` (may the agent
/// write there?) and the ``identity`` (whose file is it?).
///
/// ``at(_:relativeTo:)`` answers nil only for "nothing there" (`ENOENT`, `ENOTDIR`); any other failure (`EACCES`,
/// `EIO`, `ENOMEM`...) is thrown, never read as "absent" or "something else is there": a decision made from
/// it (repair, release, remove) would be wrong. ``PathStatus`` adds the agent's test hooks in front of it.
struct FileStatus: Sendable {
    /// The kernel's answer.
    let info: stat
    /// When the inode was born, in nanoseconds since the epoch; nil where the file system does not say.
    let born: Int64?

    init(_ info: stat, born: Int64? = nil) {
        self.info = info
        self.born = born
    }

    /// The status of `path` (relative to the directory `directory` when it is not absolute), nil when nothing
    /// is there. Throws any other failure, naming `fstatat`, the errno and the path.
    static func at(_ path: String, relativeTo directory: Int32 = AT_FDCWD) throws(SyncError) -> FileStatus? {
        do throws(SystemCallFailure) {
            return try status(at: path, relativeTo: directory, flags: AT_SYMLINK_NOFOLLOW)
        } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR { return nil }
            throw failure(of: path, errno: error.errno)
        }
    }

    /// The status of the file open as `descriptor` (`fstat`); `path` names it in the error.
    static func of(descriptor: Int32, path: String) throws(SyncError) -> FileStatus {
        var info = stat()
        var born: Int64 = 0
        var hasBorn: Int32 = 0
        do throws(SystemCallFailure) {
            _ = try retryingInterrupts { emojiart_status_of(descriptor, &info, &born, &hasBorn) }
        } catch {
            throw SyncError.system("fstat", path: path, errno: error.errno, hint: "cannot tell which file the asset is")
        }
        return FileStatus(info, born: hasBorn != 0 ? born : nil)
    }

    private static func status(at path: String, relativeTo directory: Int32, flags: Int32) throws(SystemCallFailure) -> FileStatus {
        var info = stat()
        var born: Int64 = 0
        var hasBorn: Int32 = 0
        _ = try retryingInterrupts { emojiart_status_at(directory, path, flags, &info, &born, &hasBorn) }
        return FileStatus(info, born: hasBorn != 0 ? born : nil)
    }

    /// The error of a status call on `path` that failed with `code`.
    static func failure(of path: String, errno code: Int32) -> SyncError {
        SyncError.system("fstatat", path: path, errno: code, hint: "cannot tell what is at the path; left as it is")
    }

    /// The fingerprint of a regular file; nil for anything else (a link, a directory, a FIFO...).
    var fingerprint: FileFingerprint? { FileFingerprint(regular: info) }

    /// Which file this is, whatever its kind.
    var identity: FileIdentity { FileIdentity(info, born: born) }

    /// What occupies the path, for the agent's write-or-refuse decision.
    var occupant: PathOccupant { PathOccupant(info) }

    /// Names of the inode (`st_nlink`).
    var links: Int { Int(info.st_nlink) }
}
